import { eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { apiKeys } from '../src/db/schema/index.js';
import { buildTestApp, call } from './helpers/app.js';
import { expectError, expectValidationError } from './helpers/conventions.js';
import { createVia, makeCompany, makeKey, makeUser } from './helpers/factories.js';

/** Keys over HTTP (DECISIONS §12): the resource, its rules, rotation and revocation. */

const ctx = await buildTestApp();
/** A second instance on the same database, caching keys with the default TTL (closed before the first). */
const second = await buildApp({ config: ctx.config, database: ctx.database, ownsDatabase: false });
await second.ready();
afterAll(() => second.close());
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FIELDS = ['allowed_ips', 'created_at', 'expires_at', 'key_prefix', 'last_used_at', 'mode', 'name', 'revoked_at', 'scopes', 'user_id', 'uuid'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const me = (key: string) => call(ctx.app, 'GET', '/api/v1/companies/me', { key });

/** Polls until the key is refused; the time it took in ms (fails past `limitMs`). */
async function msUntilRefused(app: typeof ctx.app, key: string, limitMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const response = await call(app, 'GET', '/api/v1/companies/me', { key });
    if (response.status === 401) return Date.now() - started;
    expect(response.status).toBe(200);
    if (Date.now() - started > limitMs) throw new Error(`still accepted after ${limitMs} ms`);
    await sleep(100);
  }
}

describe('POST /api/v1/api_keys', () => {
  it('answers the key with its secret once; the secret works; a GET never shows it', async () => {
    const company = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/api_keys', {
      key: company.key,
      body: { name: '  Books sync ', scopes: ['payments:write', 'invoices:read', 'invoices:read'], allowed_ips: ['127.0.0.1', '::1'], expires_at: '2031-01-01T00:00:00+02:00' },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const key = response.body.data;
    expect(Object.keys(key).sort()).toEqual([...FIELDS, 'api_key'].sort());
    expect(key).toMatchObject({
      name: 'Books sync',
      mode: 'live',
      // Distinct, in the order given.
      scopes: ['payments:write', 'invoices:read'],
      allowed_ips: ['127.0.0.1', '::1'],
      user_id: company.userId,
      last_used_at: null,
      expires_at: '2030-12-31T22:00:00.000Z',
      revoked_at: null,
    });
    expect(key.uuid).toMatch(UUID);
    expect(key.created_at).toMatch(TIMESTAMP);
    expect(key.api_key).toMatch(/^fsc_live_[A-Za-z0-9_-]{43}$/);
    expect(key.key_prefix).toBe(key.api_key.slice(0, 17));
    expect(response.headers.etag).toMatch(/^"[\w-]{32}"$/);

    const unused = await call(ctx.app, 'GET', `/api/v1/api_keys/${key.uuid}`, { key: company.key });
    const { api_key: _secret, ...record } = key;
    expect(unused.body.data).toEqual(record);
    expect(unused.headers.etag).toBe(response.headers.etag);

    const read = await call(ctx.app, 'GET', '/api/v1/invoices', { key: key.api_key });
    expect(read.status).toBe(200);
    await ctx.app.deps.lastUsed.flush();
    const got = await call(ctx.app, 'GET', `/api/v1/api_keys/${key.uuid}`, { key: company.key });
    expect(got.status).toBe(200);
    // The use is recorded; nothing else of the key changed.
    expect(got.body.data).toEqual({ ...record, last_used_at: expect.stringMatching(TIMESTAMP) });
    expect(got.headers.etag).not.toBe(response.headers.etag);
    expect(JSON.stringify(got.body)).not.toContain(key.api_key);
  });

  it('an Idempotency-Key replay answers the same key without its secret, which is never stored', async () => {
    const company = await makeCompany(ctx.database);
    const headers = { 'idempotency-key': 'make-key-1' };
    const body = { name: 'Once', scopes: ['jobs:read'] };
    const first = await call(ctx.app, 'POST', '/api/v1/api_keys', { key: company.key, headers, body });
    expect(first.status).toBe(200);
    const replay = await call(ctx.app, 'POST', '/api/v1/api_keys', { key: company.key, headers, body });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const { api_key: secret, ...record } = first.body.data;
    expect(replay.body.data).toEqual(record);
    const stored = await ctx.database.db.execute(sql`select response_body::text as body from idempotency_keys where company_id = ${company.companyId}`);
    const rows = (stored as unknown as { rows: Array<{ body: string }> }).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0].body).toContain(record.uuid);
    expect(rows[0].body).not.toContain(secret);
    expect((await call(ctx.app, 'GET', '/api/v1/api_keys', { key: company.key })).body.data.pagination.total).toBe(2);
  });

  it('gives the key to the calling key’s user', async () => {
    const company = await makeCompany(ctx.database);
    const tech = await makeUser(ctx.database, company.companyId);
    const techKey = (await makeKey(ctx.database, company.companyId, { userId: tech })).api_key;
    const made = await createVia(ctx.app, techKey, '/api_keys', { scopes: ['jobs:read'] });
    expect(made.user_id).toBe(tech);
    expectValidationError(await call(ctx.app, 'POST', '/api/v1/api_keys', { key: techKey, body: { scopes: ['jobs:read'], user_id: company.userId } }), 'user_id');
  });

  it('refuses bad input with 400 naming the field', async () => {
    const { key } = await makeCompany(ctx.database);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'scopes'],
      [{ scopes: [] }, 'scopes'],
      [{ scopes: 'jobs:read' }, 'scopes'],
      [{ scopes: ['jobs:delete'] }, 'scopes[0]'],
      [{ scopes: ['Jobs:read'] }, 'scopes[0]'],
      [{ scopes: ['*', 'jobs:read'] }, 'scopes'],
      [{ scopes: ['jobs:read'], name: '' }, 'name'],
      [{ scopes: ['jobs:read'], name: 'x'.repeat(101) }, 'name'],
      [{ scopes: ['jobs:read'], mode: 'sandbox' }, 'mode'],
      [{ scopes: ['jobs:read'], allowed_ips: ['10.0.0.0/33'] }, 'allowed_ips[0]'],
      [{ scopes: ['jobs:read'], allowed_ips: 'any' }, 'allowed_ips'],
      [{ scopes: ['jobs:read'], expires_at: 'soon' }, 'expires_at'],
      [{ scopes: ['jobs:read'], expires_at: '2031-01-01T00:00:00' }, 'expires_at'],
      [{ scopes: ['jobs:read'], key_prefix: 'fsc_live_AAAAAAAA' }, 'key_prefix'],
      [{ scopes: ['jobs:read'], api_key: `fsc_live_${'A'.repeat(43)}` }, 'api_key'],
    ];
    for (const [body, field] of cases) {
      expectValidationError(await call(ctx.app, 'POST', '/api/v1/api_keys', { key, body }), field);
    }
    // An unknown scope is invalid_enum, and its message lists the scopes there are.
    const unknown = await call(ctx.app, 'POST', '/api/v1/api_keys', { key, body: { scopes: ['foo:read'] } });
    expect(unknown.body.error.details[0]).toMatchObject({ field: 'scopes[0]', code: 'invalid_enum' });
    for (const scope of ['*', 'company:read', 'schedule:write', 'api_keys:write']) expect(unknown.body.error.details[0].message).toContain(scope);
    const list = await call(ctx.app, 'GET', '/api/v1/api_keys', { key });
    expect(list.body.data.pagination.total).toBe(1);
  });
});

describe('GET /api/v1/api_keys', () => {
  it('lists with the list conventions, newest first, revoked keys only with include_deleted', async () => {
    const company = await makeCompany(ctx.database);
    const made: Array<{ uuid: string }> = [];
    for (const name of ['one', 'two', 'three']) made.push(await createVia(ctx.app, company.key, '/api_keys', { name, scopes: ['jobs:read'] }));
    expect((await call(ctx.app, 'DELETE', `/api/v1/api_keys/${made[0].uuid}`, { key: company.key })).status).toBe(200);

    const page = await call(ctx.app, 'GET', '/api/v1/api_keys?limit=2', { key: company.key });
    expect(page.status).toBe(200);
    expect(page.body.data.api_keys.map((key: { name: string }) => key.name)).toEqual(['three', 'two']);
    expect(page.body.data.pagination).toEqual({ page: 1, limit: 2, total: 3, total_pages: 2 });
    expect(page.headers.etag).toBeUndefined();
    for (const key of page.body.data.api_keys) expect(Object.keys(key).sort()).toEqual(FIELDS);
    const second = await call(ctx.app, 'GET', '/api/v1/api_keys?limit=2&page=2', { key: company.key });
    expect(second.body.data.api_keys).toHaveLength(1);
    expect(second.body.data.api_keys[0].key_prefix).toBe(company.key.slice(0, 17));

    const all = await call(ctx.app, 'GET', '/api/v1/api_keys?include_deleted=true', { key: company.key });
    expect(all.body.data.pagination.total).toBe(4);
    expect(all.body.data.api_keys.find((key: { uuid: string }) => key.uuid === made[0].uuid).revoked_at).toMatch(TIMESTAMP);
    expect(JSON.stringify(all.body)).not.toMatch(/fsc_live_[A-Za-z0-9_-]{43}/);

    for (const query of ['limit=101', 'page=0', 'include_deleted=maybe', 'sort=name', 'mode=live']) {
      expectError(await call(ctx.app, 'GET', `/api/v1/api_keys?${query}`, { key: company.key }), 400, 'validation_error');
    }
  });

  it('another company’s key is 404', async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const keyOfA = await createVia(ctx.app, a.key, '/api_keys', { scopes: ['jobs:read'] });
    for (const [method, path, body] of [
      ['GET', `/api/v1/api_keys/${keyOfA.uuid}`, undefined],
      ['PATCH', `/api/v1/api_keys/${keyOfA.uuid}`, { name: 'x' }],
      ['POST', `/api/v1/api_keys/${keyOfA.uuid}/roll`, {}],
      ['DELETE', `/api/v1/api_keys/${keyOfA.uuid}`, undefined],
    ] as const) {
      expectError(await call(ctx.app, method, path, { key: b.key, body }), 404, 'not_found');
    }
    expect((await call(ctx.app, 'GET', '/api/v1/jobs', { key: keyOfA.api_key })).status).toBe(200);
    expectError(await call(ctx.app, 'GET', '/api/v1/api_keys/not-a-uuid', { key: a.key }), 400, 'validation_error');
  });
});

describe('PATCH /api/v1/api_keys/{uuid}', () => {
  it('changes name, scopes, allowed IPs and expiry; the change bites at once on this instance', async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { name: 'Reader', scopes: ['customers:read', 'jobs:read'] });
    expect((await call(ctx.app, 'GET', '/api/v1/customers', { key: made.api_key })).status).toBe(200);

    const patched = await call(ctx.app, 'PATCH', `/api/v1/api_keys/${made.uuid}`, {
      key: company.key,
      body: { name: null, scopes: ['jobs:read'], allowed_ips: ['2001:db8::/32'], expires_at: '2032-06-01T00:00:00Z' },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data).toMatchObject({ name: null, scopes: ['jobs:read'], allowed_ips: ['2001:db8::/32'], expires_at: '2032-06-01T00:00:00.000Z' });
    expect(patched.body.data.key_prefix).toBe(made.key_prefix);
    const headers = { authorization: `Bearer ${made.api_key}` };
    const fromAllowed = await ctx.app.inject({ method: 'GET', url: '/api/v1/jobs', headers, remoteAddress: '2001:db8::5' });
    expect(fromAllowed.statusCode).toBe(200);
    const narrowed = await ctx.app.inject({ method: 'GET', url: '/api/v1/customers', headers, remoteAddress: '2001:db8::5' });
    expect(narrowed.json().error.code).toBe('insufficient_scope');
    const elsewhere = await ctx.app.inject({ method: 'GET', url: '/api/v1/jobs', headers, remoteAddress: '203.0.113.9' });
    expect(elsewhere.json().error.code).toBe('ip_restricted');

    const cleared = await call(ctx.app, 'PATCH', `/api/v1/api_keys/${made.uuid}`, { key: company.key, body: { allowed_ips: [], expires_at: null } });
    expect(cleared.body.data).toMatchObject({ allowed_ips: [], expires_at: null });
    expect((await call(ctx.app, 'GET', '/api/v1/jobs', { key: made.api_key })).status).toBe(200);

    for (const [body, field] of [
      [{ scopes: [] }, 'scopes'],
      [{ mode: 'test' }, 'mode'],
      [{ user_id: company.userId }, 'user_id'],
      [{ expires_at: 'next tuesday' }, 'expires_at'],
    ] as const) {
      expectValidationError(await call(ctx.app, 'PATCH', `/api/v1/api_keys/${made.uuid}`, { key: company.key, body }), field);
      expectValidationError(await call(ctx.app, 'PUT', `/api/v1/api_keys/${made.uuid}`, { key: company.key, body }), field);
    }
  });

  it('PUT is the same partial update as PATCH (DECISIONS §4: every item path)', async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { name: 'Reader', scopes: ['customers:read', 'jobs:read'] });
    const unchanged = await call(ctx.app, 'PUT', `/api/v1/api_keys/${made.uuid}`, { key: company.key, body: {} });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.data).toMatchObject({ name: 'Reader', scopes: ['customers:read', 'jobs:read'] });
    const renamed = await call(ctx.app, 'PUT', `/api/v1/api_keys/${made.uuid}`, { key: company.key, body: { name: 'Jobs only', scopes: ['jobs:read'] } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'Jobs only', scopes: ['jobs:read'], key_prefix: made.key_prefix });
    expect((await call(ctx.app, 'GET', `/api/v1/api_keys/${made.uuid}`, { key: company.key })).body.data).toEqual(renamed.body.data);
    expect((await call(ctx.app, 'GET', '/api/v1/customers', { key: made.api_key })).body.error.code).toBe('insufficient_scope');
    const reader = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['api_keys:read'] });
    expectError(await call(ctx.app, 'PUT', `/api/v1/api_keys/${made.uuid}`, { key: reader.api_key, body: { name: 'x' } }), 403, 'insufficient_scope');
    const other = await makeCompany(ctx.database);
    expectError(await call(ctx.app, 'PUT', `/api/v1/api_keys/${made.uuid}`, { key: other.key, body: { name: 'x' } }), 404, 'not_found');
  });

  it('an expiry already past expires the key at once', async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['company:read'] });
    expect((await me(made.api_key)).status).toBe(200);
    const ended = await call(ctx.app, 'PATCH', `/api/v1/api_keys/${made.uuid}`, { key: company.key, body: { expires_at: '2001-01-01T00:00:00Z' } });
    expect(ended.status).toBe(200);
    expect(ended.body.data.expires_at).toBe('2001-01-01T00:00:00.000Z');
    expectError(await me(made.api_key), 401, 'unauthorized');
    const bornExpired = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['company:read'], expires_at: '2020-01-01T00:00:00Z' });
    expectError(await me(bornExpired.api_key), 401, 'unauthorized');
  });

  it('honours If-Match', async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['jobs:read'] });
    const url = `/api/v1/api_keys/${made.uuid}`;
    const stale = await call(ctx.app, 'PATCH', url, { key: company.key, body: { name: 'x' }, headers: { 'if-match': '"stale"' } });
    expectError(stale, 412, 'precondition_failed');
    const etag = (await call(ctx.app, 'GET', url, { key: company.key })).headers.etag as string;
    const fresh = await call(ctx.app, 'PATCH', url, { key: company.key, body: { name: 'x' }, headers: { 'if-match': etag } });
    expect(fresh.status).toBe(200);
    expectError(await call(ctx.app, 'DELETE', url, { key: company.key, headers: { 'if-match': etag } }), 412, 'precondition_failed');
  });

  it('an expired key is 401, and the expiry can be extended', async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['company:read'], expires_at: new Date(Date.now() + 1500).toISOString() });
    expect((await me(made.api_key)).status).toBe(200);
    await sleep(1600);
    const expired = await me(made.api_key);
    expectError(expired, 401, 'unauthorized');
    expect(expired.body.error.message).toMatch(/expired/);
    await call(ctx.app, 'PATCH', `/api/v1/api_keys/${made.uuid}`, { key: company.key, body: { expires_at: null } });
    expect((await me(made.api_key)).status).toBe(200);
  });
});

describe('DELETE /api/v1/api_keys/{uuid}', () => {
  it('revokes at once on this instance; the key stays readable with include_deleted', async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['*'] });
    expect((await me(made.api_key)).status).toBe(200);
    const revoked = await call(ctx.app, 'DELETE', `/api/v1/api_keys/${made.uuid}`, { key: company.key });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toEqual({ message: 'API key revoked successfully' });
    expectError(await me(made.api_key), 401, 'unauthorized');
    for (const [method, path, body] of [
      ['GET', `/api/v1/api_keys/${made.uuid}`, undefined],
      ['PATCH', `/api/v1/api_keys/${made.uuid}`, { name: 'x' }],
      ['POST', `/api/v1/api_keys/${made.uuid}/roll`, {}],
      ['DELETE', `/api/v1/api_keys/${made.uuid}`, undefined],
    ] as const) {
      expectError(await call(ctx.app, method, path, { key: company.key, body }), 404, 'not_found');
    }
    const withDeleted = await call(ctx.app, 'GET', `/api/v1/api_keys/${made.uuid}?include_deleted=true`, { key: company.key });
    expect(withDeleted.body.data.revoked_at).toMatch(TIMESTAMP);
  });

  it('a revoked key is 401 within 5 s on a second instance sharing the database', { timeout: 20_000 }, async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['company:read'] });
    // The second instance caches the key with its default TTL.
    expect((await call(second, 'GET', '/api/v1/companies/me', { key: made.api_key })).status).toBe(200);
    expect((await call(ctx.app, 'DELETE', `/api/v1/api_keys/${made.uuid}`, { key: company.key })).status).toBe(200);
    expect(await msUntilRefused(second, made.api_key, 5_000)).toBeLessThanOrEqual(5_000);
  });
});

describe('POST /api/v1/api_keys/{uuid}/roll', () => {
  it('without a grace period the old secret stops at once and the new one works', async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { name: 'Sync', scopes: ['jobs:read'] });
    expect((await call(ctx.app, 'GET', '/api/v1/jobs', { key: made.api_key })).status).toBe(200);
    const rolled = await call(ctx.app, 'POST', `/api/v1/api_keys/${made.uuid}/roll`, { key: company.key });
    expect(rolled.status, JSON.stringify(rolled.body)).toBe(200);
    const key = rolled.body.data;
    expect(key).toMatchObject({ uuid: made.uuid, name: 'Sync', scopes: ['jobs:read'], mode: 'live' });
    expect(key.api_key).toMatch(/^fsc_live_[A-Za-z0-9_-]{43}$/);
    expect(key.api_key).not.toBe(made.api_key);
    expect(key.key_prefix).toBe(key.api_key.slice(0, 17));
    expectError(await call(ctx.app, 'GET', '/api/v1/jobs', { key: made.api_key }), 401, 'unauthorized');
    expect((await call(ctx.app, 'GET', '/api/v1/jobs', { key: key.api_key })).status).toBe(200);
  });

  it('the old secret works during the grace period, on every instance, and is 401 after it', { timeout: 20_000 }, async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['company:read'] });
    expect((await call(second, 'GET', '/api/v1/companies/me', { key: made.api_key })).status).toBe(200);
    const rolled = await call(ctx.app, 'POST', `/api/v1/api_keys/${made.uuid}/roll`, { key: company.key, body: { grace_seconds: 3 } });
    expect(rolled.status).toBe(200);
    const rolledAt = Date.now();
    for (const app of [ctx.app, second]) {
      expect((await call(app, 'GET', '/api/v1/companies/me', { key: made.api_key })).status).toBe(200);
      expect((await call(app, 'GET', '/api/v1/companies/me', { key: rolled.body.data.api_key })).status).toBe(200);
    }
    // Both refuse the old secret once the 3 s are over (checked per request, not at the next reload).
    await sleep(Math.max(0, rolledAt + 3_100 - Date.now()));
    for (const app of [ctx.app, second]) {
      expectError(await call(app, 'GET', '/api/v1/companies/me', { key: made.api_key }), 401, 'unauthorized');
      expect((await call(app, 'GET', '/api/v1/companies/me', { key: rolled.body.data.api_key })).status).toBe(200);
    }
  });

  it('a revoke ends an old secret’s grace period too; rolling twice keeps both old secrets until theirs ends', async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['company:read'] });
    const first = (await call(ctx.app, 'POST', `/api/v1/api_keys/${made.uuid}/roll`, { key: company.key, body: { grace_seconds: 600 } })).body.data;
    const second = (await call(ctx.app, 'POST', `/api/v1/api_keys/${made.uuid}/roll`, { key: company.key, body: { grace_seconds: 600 } })).body.data;
    for (const secret of [made.api_key, first.api_key, second.api_key]) expect((await me(secret)).status).toBe(200);
    expect((await call(ctx.app, 'DELETE', `/api/v1/api_keys/${made.uuid}`, { key: company.key })).status).toBe(200);
    for (const secret of [made.api_key, first.api_key, second.api_key]) expectError(await me(secret), 401, 'unauthorized');
  });

  it('refuses a grace period outside 0..604800 and accepts no body', async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['company:read'] });
    const url = `/api/v1/api_keys/${made.uuid}/roll`;
    for (const grace_seconds of [-1, 604_801, 1.5, '60', null]) {
      expectValidationError(await call(ctx.app, 'POST', url, { key: company.key, body: { grace_seconds } }), 'grace_seconds');
    }
    expectValidationError(await call(ctx.app, 'POST', url, { key: company.key, body: { grace: 5 } }), 'grace');
    expect((await call(ctx.app, 'POST', url, { key: company.key, body: { grace_seconds: 604_800 } })).status).toBe(200);
    const none = await call(ctx.app, 'POST', url, { key: company.key });
    expect(none.status, JSON.stringify(none.body)).toBe(200);
  });
});

describe('last_used_at', () => {
  it("is written at a key's first use, then without a write per request until the next flush", async () => {
    const company = await makeCompany(ctx.database);
    const made = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['company:read'] });
    await ctx.app.deps.lastUsed.flush();
    const stored = async () =>
      (await ctx.database.db.select({ at: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.id, made.uuid)))[0].at;
    expect(await stored()).toBeNull();
    const before = Date.now();
    expect((await me(made.api_key)).status).toBe(200);
    // The first use is written at once, not at the next flush: an instance killed now keeps it.
    let first: Date | null = null;
    for (let waited = 0; first === null && waited < 5_000; waited += 20) {
      first = await stored();
      if (first === null) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(first!.getTime()).toBeGreaterThanOrEqual(before - 5);
    await new Promise((resolve) => setTimeout(resolve, 10));
    for (let i = 0; i < 3; i++) expect((await me(made.api_key)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Later uses within the interval wrote nothing of their own.
    expect((await stored())!.getTime()).toBe(first!.getTime());
    await ctx.app.deps.lastUsed.flush();
    const at = (await stored())!.getTime();
    expect(at).toBeGreaterThan(first!.getTime());
    expect(at).toBeLessThanOrEqual(Date.now());
    const shown = await call(ctx.app, 'GET', `/api/v1/api_keys/${made.uuid}`, { key: company.key });
    expect(new Date(shown.body.data.last_used_at).getTime()).toBe(at);
  });
});

describe('test keys manage test keys only', () => {
  it('a live key makes and sees keys of both modes; a test key sees and makes test keys only', async () => {
    const company = await makeCompany(ctx.database);
    const live = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['jobs:read'] });
    const test = await createVia(ctx.app, company.key, '/api_keys', { mode: 'test', scopes: ['*'] });
    expect(test.mode).toBe('test');
    expect(test.api_key).toMatch(/^fsc_test_[A-Za-z0-9_-]{43}$/);
    expect(test.key_prefix).toBe(test.api_key.slice(0, 17));

    const allModes = await call(ctx.app, 'GET', '/api/v1/api_keys', { key: company.key });
    expect(allModes.body.data.api_keys.map((key: { mode: string }) => key.mode)).toEqual(['test', 'live', 'live']);

    const testOnly = await call(ctx.app, 'GET', '/api/v1/api_keys', { key: test.api_key });
    expect(testOnly.body.data.api_keys.map((key: { uuid: string }) => key.uuid)).toEqual([test.uuid]);
    expectError(await call(ctx.app, 'GET', `/api/v1/api_keys/${live.uuid}`, { key: test.api_key }), 404, 'not_found');
    expectError(await call(ctx.app, 'DELETE', `/api/v1/api_keys/${live.uuid}`, { key: test.api_key }), 404, 'not_found');
    expectValidationError(await call(ctx.app, 'POST', '/api/v1/api_keys', { key: test.api_key, body: { mode: 'live', scopes: ['jobs:read'] } }), 'mode');

    // Without a mode a key makes keys of its own mode.
    const child = await createVia(ctx.app, test.api_key, '/api_keys', { scopes: ['jobs:read'] });
    expect(child.mode).toBe('test');
    expect(child.user_id).toBe(company.userId);
    const rolled = await call(ctx.app, 'POST', `/api/v1/api_keys/${child.uuid}/roll`, { key: test.api_key });
    expect(rolled.body.data.api_key).toMatch(/^fsc_test_/);
    expect((await call(ctx.app, 'GET', '/api/v1/api_keys', { key: company.key })).body.data.pagination.total).toBe(4);
  });
});
