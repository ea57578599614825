import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';

// TTL 0: changes made by the CLI are seen by the next request.
const ctx = await buildTestApp({ env: { AUTH_CACHE_TTL_MS: '0' } });
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const KEY = /^fsc_live_[A-Za-z0-9_-]{43}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the admin CLI on this file's database; `viaNpm` goes through `npm run --silent admin --`. */
function admin(args: string[], options: { viaNpm?: boolean } = {}): Promise<Run> {
  const [command, commandArgs] = options.viaNpm
    ? ['npm', ['run', '--silent', 'admin', '--', ...args]]
    : [process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: ctx.databaseUrl, MIGRATE_ON_START: 'false' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The one JSON object a successful command prints. */
function output(run: Run): Record<string, unknown> {
  expect(run.code, run.stderr).toBe(0);
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const parsed = JSON.parse(lines[0]);
  expect(typeof parsed).toBe('object');
  expect(Array.isArray(parsed)).toBe(false);
  return parsed;
}

function expectFailure(run: Run, message: RegExp) {
  expect(run.code).not.toBe(0);
  expect(run.code).not.toBeNull();
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(message);
}

const me = (key: string) => call(ctx.app, 'GET', '/api/v1/companies/me', { key });

describe.skipIf(!ctx.databaseUrl)('admin CLI', { timeout: 90_000 }, () => {
  it('create-company prints {company_uuid, user_id, api_key} and the key works over HTTP; the whole key lifecycle follows', async () => {
    const created = output(await admin(['create-company', '--name', 'Cool Air LLC', '--email', 'ops@coolair.example'], { viaNpm: true }));
    expect(Object.keys(created).sort()).toEqual(['api_key', 'company_uuid', 'user_id']);
    expect(created.company_uuid).toMatch(UUID);
    expect(created.user_id).toMatch(UUID);
    expect(created.api_key).toMatch(KEY);
    const companyId = created.company_uuid as string;

    const company = await me(created.api_key as string);
    expect(company.status).toBe(200);
    expect(company.body.data).toMatchObject({ uuid: companyId, name: 'Cool Air LLC', email: 'ops@coolair.example' });
    // Without --addons the company has every add-on and no limit.
    expect((await call(ctx.app, 'GET', '/api/v1/numbering', { key: created.api_key as string })).status).toBe(200);
    expect(company.headers).not.toHaveProperty('x-usage-limit');
    const owners = await call(ctx.app, 'GET', '/api/v1/users', { key: created.api_key as string });
    expect(owners.body.data.users.map((user: { id: string }) => user.id)).toEqual([created.user_id]);

    const user = output(await admin(['create-user', '--company', companyId, '--first-name', 'Sam', '--last-name', 'Tech', '--email', 'sam@coolair.example']));
    expect(Object.keys(user)).toEqual(['user_id']);
    expect(user.user_id).toMatch(UUID);
    const users = await call(ctx.app, 'GET', '/api/v1/users', { key: created.api_key as string });
    expect(users.body.data.users[0]).toStrictEqual({ id: user.user_id, first_name: 'Sam', last_name: 'Tech', email: 'sam@coolair.example' });

    const key = output(
      await admin(['create-api-key', '--company', companyId, '--user', user.user_id as string, '--allowed-ips', '10.0.0.0/8,2001:db8::/32']),
    );
    expect(Object.keys(key).sort()).toEqual(['api_key', 'key_prefix']);
    expect(key.api_key).toMatch(KEY);
    expect((key.api_key as string).startsWith(key.key_prefix as string)).toBe(true);
    expect((key.key_prefix as string).length).toBeLessThan((key.api_key as string).length);
    const headers = { authorization: `Bearer ${key.api_key}` };
    const allowed = await ctx.app.inject({ method: 'GET', url: '/api/v1/companies/me', headers, remoteAddress: '10.4.5.6' });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json().data.uuid).toBe(companyId);
    expect((await ctx.app.inject({ method: 'GET', url: '/api/v1/companies/me', headers, remoteAddress: '2001:db8::9' })).statusCode).toBe(200);
    const blocked = await ctx.app.inject({ method: 'GET', url: '/api/v1/companies/me', headers, remoteAddress: '192.0.2.1' });
    expect(blocked.statusCode).toBe(403);
    expect(blocked.json().error.code).toBe('ip_restricted');

    const revoked = output(await admin(['revoke-api-key', '--key-prefix', key.key_prefix as string]));
    expect(revoked).toStrictEqual({ revoked: true });
    const refused = await ctx.app.inject({ method: 'GET', url: '/api/v1/companies/me', headers, remoteAddress: '10.4.5.6' });
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error.code).toBe('unauthorized');
    // The owner's key is untouched.
    expect((await me(created.api_key as string)).status).toBe(200);

    const set = output(await admin(['set-company', '--company', companyId, '--addons', '', '--monthly-request-limit', '3']));
    expect(set).toStrictEqual({ company_uuid: companyId });
    const numbering = await call(ctx.app, 'GET', '/api/v1/numbering', { key: created.api_key as string });
    expect(numbering.status).toBe(403);
    expect(numbering.body.error.code).toBe('addon_required');
    expect(numbering.headers['x-usage-limit']).toBe('3');

    const unset = output(await admin(['set-company', '--company', companyId, '--addons', 'numbering', '--monthly-request-limit', 'none']));
    expect(unset).toStrictEqual({ company_uuid: companyId });
    const again = await call(ctx.app, 'GET', '/api/v1/numbering', { key: created.api_key as string });
    expect(again.status).toBe(200);
    expect(again.headers).not.toHaveProperty('x-usage-limit');
  });

  it("create-company --addons '' gives no add-ons and --monthly-request-limit sets the limit; create-api-key defaults to the owner", async () => {
    const created = output(
      await admin(['create-company', '--name', 'Bare', '--email', 'bare@example.com', '--addons', '', '--monthly-request-limit', '2']),
    );
    const key = created.api_key as string;
    const first = await me(key);
    expect(first.status).toBe(200);
    expect(first.headers['x-usage-limit']).toBe('2');
    expect(first.headers['x-usage-count']).toBe('1');
    const numbering = await call(ctx.app, 'GET', '/api/v1/numbering', { key });
    expect(numbering.status).toBe(403);
    expect(numbering.body.error.code).toBe('addon_required');
    const over = await me(key);
    expect(over.status).toBe(403);
    expect(over.body.error.code).toBe('usage_limit_exceeded');

    const second = output(await admin(['create-api-key', '--company', created.company_uuid as string]));
    expect(second.api_key).toMatch(KEY);
    expect(second.api_key).not.toBe(key);
  });

  it('refuses bad input with a non-zero exit, a message on stderr and nothing on stdout', async () => {
    const missingCompany = '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70';
    const runs = await Promise.all([
      admin(['create-company', '--name', 'No Email']),
      admin(['create-company', '--name', 'X', '--email', 'x@example.com', '--addons', 'photos,teleport']),
      admin(['set-company', '--company', missingCompany, '--monthly-request-limit', 'lots']),
      admin(['create-user', '--company', missingCompany, '--first-name', 'A', '--last-name', 'B']),
      admin(['create-api-key', '--company', missingCompany, '--allowed-ips', '10.0.0.0/99']),
      admin(['revoke-api-key', '--key-prefix', 'fsc_live_nothere']),
      admin(['frobnicate', '--bogus-flag']),
    ]);
    const messages = [/email/i, /teleport/, /monthly-request-limit/, /company/i, /10\.0\.0\.0\/99|CIDR/i, /prefix|key/i, /frobnicate|unknown|bogus/i];
    runs.forEach((run, index) => expectFailure(run, messages[index]));
  });

  it("refuses a user's email that is not an email address and a stray argument, writing nothing", async () => {
    const company = await makeCompany(ctx.database);
    const before = (await call(ctx.app, 'GET', '/api/v1/users', { key: company.key })).body.data.pagination.total;
    const runs = await Promise.all([
      admin(['create-user', '--company', company.companyId, '--first-name', 'A', '--last-name', 'B', '--email', 'not-an-email']),
      admin(['create-user', '--company', company.companyId, '--first-name', 'A', '--last-name', 'B', '--email', '']),
      admin(['create-user', '--company', company.companyId, '--first-name', 'A', 'B']),
      admin(['create-company', '--name', 'Stray', '--email', 'stray@example.com', 'extra']),
    ]);
    const messages = [/email/i, /email/i, /Unexpected argument 'B'/, /Unexpected argument 'extra'/];
    runs.forEach((run, index) => expectFailure(run, messages[index]));
    const users = await call(ctx.app, 'GET', '/api/v1/users', { key: company.key });
    expect(users.status).toBe(200);
    expect(users.body.data.pagination.total).toBe(before);

    const made = output(await admin(['create-user', '--company', company.companyId, '--first-name', 'A', '--last-name', 'B', '--email', 'a.b@example.com']));
    const listed = await call(ctx.app, 'GET', '/api/v1/users', { key: company.key });
    expect(listed.body.data.users).toContainEqual({ id: made.user_id, first_name: 'A', last_name: 'B', email: 'a.b@example.com' });
  });

  it('refuses create-api-key for a user of another company', async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    expectFailure(await admin(['create-api-key', '--company', a.companyId, '--user', b.userId]), /user/i);
  });
  it('list-companies and list-api-keys show companies and keys (prefix, user, IPs, created, last used), never a key', async () => {
    const a = await makeCompany(ctx.database, { name: 'Listed A' });
    const b = await makeCompany(ctx.database, { name: 'Listed B' });
    const restricted = output(await admin(['create-api-key', '--company', a.companyId, '--allowed-ips', '10.0.0.0/8']));
    // The owner's key is used once, so it gets a last_used_at (written at the instance's next flush); the new key is unused.
    expect((await me(a.key)).status).toBe(200);
    await ctx.app.deps.lastUsed.flush();

    const listed = output(await admin(['list-companies'], { viaNpm: true }));
    const companies = listed.companies as Array<Record<string, unknown>>;
    const entry = companies.find((company) => company.company_uuid === a.companyId);
    expect(entry).toMatchObject({ name: 'Listed A', addons: ['photos', 'numbering'], monthly_request_limit: null });
    expect(entry?.created_at).toMatch(/Z$/);
    expect(companies.some((company) => company.company_uuid === b.companyId)).toBe(true);

    const keys = output(await admin(['list-api-keys', '--company', a.companyId]));
    expect(keys.company_uuid).toBe(a.companyId);
    const list = keys.api_keys as Array<Record<string, unknown>>;
    expect(list).toHaveLength(2);
    // Newest first.
    expect(list[0]).toMatchObject({ key_prefix: restricted.key_prefix, user_id: a.userId, allowed_ips: ['10.0.0.0/8'], last_used_at: null, revoked_at: null });
    expect(a.key.startsWith(list[1].key_prefix as string)).toBe(true);
    expect(list[1]).toMatchObject({ user_id: a.userId, allowed_ips: [], revoked_at: null });
    expect(list[1].last_used_at).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
    expect(list[0]).toMatchObject({ name: null, mode: 'live', scopes: ['*'], expires_at: null });
    expect(list[0].uuid).toMatch(UUID);
    expect(Object.keys(list[0]).sort()).toEqual([
      'allowed_ips', 'created_at', 'expires_at', 'key_prefix', 'last_used_at', 'mode', 'name', 'revoked_at', 'scopes', 'user_id', 'user_name', 'uuid',
    ]);
    const text = JSON.stringify(keys);
    expect(text).not.toContain(a.key);
    expect(text).not.toContain(restricted.api_key as string);
    // Only the asked company's keys.
    expect(text).not.toContain(b.key.slice(0, 16));

    expectFailure(await admin(['list-api-keys']), /--company/);
    expectFailure(await admin(['list-api-keys', '--company', '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70']), /company/i);
  });

  it('create-api-key --test issues a test key for the sandbox; list-api-keys shows mode and scopes; sandboxes stay out of the company commands', async () => {
    const live = await makeCompany(ctx.database, { name: 'Sandboxed Co' });
    const test = output(await admin(['create-api-key', '--company', live.companyId, '--test']));
    expect(test.api_key).toMatch(/^fsc_test_[A-Za-z0-9_-]{43}$/);
    expect(test.key_prefix).toBe((test.api_key as string).slice(0, 17));
    const testKey = test.api_key as string;

    // The test key works on the sandbox, the company's own data space: the company's record, the same users.
    const sandbox = await me(testKey);
    expect(sandbox.status).toBe(200);
    expect(sandbox.body.data).toMatchObject({ uuid: live.companyId, name: 'Sandboxed Co' });
    const found = await ctx.database.db.execute(sql`select uuid from companies where sandbox_of = ${live.companyId}`);
    const [row] = (found as unknown as { rows: Array<{ uuid: string }> }).rows;
    const sandboxId = row!.uuid;
    expect(sandboxId).not.toBe(live.companyId);
    const user = output(await admin(['create-user', '--company', live.companyId, '--first-name', 'Tess', '--last-name', 'Mode']));
    const users = await call(ctx.app, 'GET', '/api/v1/users', { key: testKey });
    expect(users.body.data.users.map((row: { id: string }) => row.id).sort()).toEqual([live.userId, user.user_id].sort());

    const keys = output(await admin(['list-api-keys', '--company', live.companyId]));
    const [newest, owner] = keys.api_keys as Array<Record<string, unknown>>;
    expect(newest).toMatchObject({ key_prefix: test.key_prefix, mode: 'test', scopes: ['*'], user_id: live.userId });
    expect(owner).toMatchObject({ mode: 'live', scopes: ['*'] });

    // A sandbox is no company of its own for the CLI.
    const companies = output(await admin(['list-companies'])).companies as Array<{ company_uuid: string }>;
    expect(companies.some((company) => company.company_uuid === live.companyId)).toBe(true);
    expect(companies.some((company) => company.company_uuid === sandboxId)).toBe(false);
    expectFailure(await admin(['create-api-key', '--company', sandboxId]), /No company/);
    expectFailure(await admin(['set-company', '--company', sandboxId, '--addons', '']), /No company/);

    // The sandbox follows the live company's add-ons.
    output(await admin(['set-company', '--company', live.companyId, '--addons', '']));
    const refused = await call(ctx.app, 'GET', '/api/v1/numbering', { key: testKey });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('addon_required');

    expect(output(await admin(['revoke-api-key', '--key-prefix', test.key_prefix as string]))).toStrictEqual({ revoked: true });
    expect((await me(testKey)).status).toBe(401);
    expect((await me(live.key)).status).toBe(200);
  });

  it('--help prints the usage, per command too, on stdout; --version the version; no command is a usage error', async () => {
    const help = await admin(['--help'], { viaNpm: true });
    expect(help.code).toBe(0);
    for (const command of ['create-company', 'create-user', 'create-api-key', 'revoke-api-key', 'set-company', 'list-companies', 'list-api-keys']) {
      expect(help.stdout).toContain(command);
    }
    const one = await admin(['list-api-keys', '--help']);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^Usage: .*list-api-keys --company UUID/);
    expect(one.stdout).not.toContain('create-company');
    const helpCommand = await admin(['help', 'create-company']);
    expect(helpCommand.stdout).toMatch(/--monthly-request-limit/);
    expectFailure(await admin(['help', 'frobnicate']), /frobnicate/);

    const version = await admin(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe((await import('../package.json', { with: { type: 'json' } })).default.version);

    const nothing = await admin([]);
    expect(nothing.code).toBe(2);
    expect(nothing.stdout).toBe('');
    expect(nothing.stderr).toMatch(/Usage/);
  });
});
