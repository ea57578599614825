import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { SCOPE_AREAS, SCOPES, type Scope, type ScopeArea } from '../src/auth/scopes.js';
import { authPlugin } from '../src/plugins/auth.js';
import { buildTestApp, call } from './helpers/app.js';
import { expectError } from './helpers/conventions.js';
import { createVia, makeCompany } from './helpers/factories.js';

/**
 * Scopes (DECISIONS §12), generated from the route table: every /api/v1 operation declares the scope its
 * path and method call for, and a key holding one scope reaches exactly the operations that scope allows.
 * A new route whose area this file does not know fails here.
 */

const ctx = await buildTestApp({ env: { AUTH_CACHE_TTL_MS: '0' } });
const company = await makeCompany(ctx.database);

type Operation = { method: string; path: string; scope: string | undefined; security: Array<Record<string, string[]>>; description: string };
const document = ctx.app.swagger() as unknown as { paths: Record<string, Record<string, Record<string, unknown>>> };
const operations: Operation[] = Object.entries(document.paths)
  .filter(([path]) => path.startsWith('/api/v1'))
  .flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      scope: operation['x-required-scope'] as string | undefined,
      security: operation.security as Array<Record<string, string[]>>,
      description: operation.description as string,
    })),
  );

/** The area a path belongs to: its first segment, with the few paths that belong elsewhere named. */
function areaOf(path: string): ScopeArea {
  const rest = path.replace('/api/v1/', '');
  if (rest === 'companies/me') return 'company';
  if (rest === 'sandbox') return 'api_keys';
  if (/^jobs\/\{job_uuid\}\/photos/.test(rest)) return 'job_photos';
  if (/^(visits|time_off|availability)\b/.test(rest) || /^users\/\{[^}]+\}\/calendar_link$/.test(rest)) return 'schedule';
  const first = rest.split('/')[0];
  if (!(SCOPE_AREAS as readonly string[]).includes(first)) throw new Error(`No scope area known for ${path}: add it to areaOf`);
  return first as ScopeArea;
}

/** Reading is GET, and a preview (a dry run); everything else writes (PDF reads; share link and send write). */
function expectedScope(method: string, path: string): Scope {
  const read = method === 'GET' || path.endsWith('/preview');
  return `${areaOf(path)}:${read ? 'read' : 'write'}`;
}

const allows = (held: string, needed: string) =>
  held === '*' || held === needed || (needed.endsWith(':read') && held === needed.replace(':read', ':write'));

/** A concrete url of a documented path: every parameter an id that names nothing. */
const urlOf = (path: string) => path.replace(/\{[^}]+\}/g, '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70');

/** A key of the company holding exactly these scopes (made over HTTP by its `*` key). */
async function keyWith(scopes: string[], mode: 'live' | 'test' = 'live'): Promise<string> {
  return (await createVia(ctx.app, company.key, '/api_keys', { scopes, mode })).api_key as string;
}

describe('every /api/v1 route declares its scope', () => {
  it('covers the whole API', () => {
    expect(operations.length).toBeGreaterThanOrEqual(60);
  });

  for (const operation of operations) {
    it(`${operation.method} ${operation.path} needs ${expectedScope(operation.method, operation.path)}, documented`, () => {
      const expected = expectedScope(operation.method, operation.path);
      expect(operation.scope).toBe(expected);
      expect(operation.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
      expect(operation.description).toContain(`Scope: \`${expected}\``);
    });
  }

  it('refuses to start with a route that declares no scope', async () => {
    const app = Fastify();
    await app.register(authPlugin, { db: ctx.database.db, usage: ctx.app.deps.usage, lastUsed: ctx.app.deps.lastUsed, cacheTtlMs: 0 });
    expect(() => app.get('/unscoped', async () => 'open')).toThrow(/GET \/unscoped declares no scope/);
    app.get('/scoped', { config: { scope: 'jobs:read' } }, async () => 'fine');
    await app.close();
  });
});

describe('each scope allows exactly its routes', () => {
  for (const held of ['*', ...SCOPES]) {
    it(`a key with ${held}`, async () => {
      const key = await keyWith([held]);
      for (const operation of operations) {
        const needed = expectedScope(operation.method, operation.path);
        const response = await call(ctx.app, operation.method as 'GET', urlOf(operation.path), { key });
        const label = `${held}: ${operation.method} ${operation.path} -> ${response.status} ${JSON.stringify(response.body)}`;
        expect(response.status, label).toBeLessThan(500);
        if (allows(held, needed)) {
          expect(response.body?.error?.code, label).not.toBe('insufficient_scope');
        } else {
          expectError(response, 403, 'insufficient_scope');
          expect(response.body.error.message, label).toContain(needed);
        }
      }
    });
  }
});

describe('order of checks and usage', () => {
  it('answers 401 before insufficient_scope and ip_restricted before it', async () => {
    expectError(await call(ctx.app, 'GET', '/api/v1/customers', { key: 'fsc_live_' + 'x'.repeat(43) }), 401, 'unauthorized');
    const restricted = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['invoices:read'], allowed_ips: ['203.0.113.7'] });
    const response = await ctx.app.inject({
      method: 'GET',
      url: '/api/v1/customers',
      headers: { authorization: `Bearer ${restricted.api_key}` },
      remoteAddress: '198.51.100.1',
    });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('ip_restricted');
  });

  it('answers insufficient_scope before addon_required, usage_limit_exceeded and validation, and counts it', async () => {
    const limited = await makeCompany(ctx.database, { addons: [], monthlyRequestLimit: 3 });
    const key = (await createVia(ctx.app, limited.key, '/api_keys', { scopes: ['customers:read'] })).api_key as string;
    const first = await call(ctx.app, 'GET', '/api/v1/numbering', { key });
    expectError(first, 403, 'insufficient_scope');
    expect(first.body.error.message).toContain('numbering:read');
    // The key-making request and this one count: 2 of 3.
    expect(first.headers['x-usage-count']).toBe('2');
    expect(first.headers['x-usage-limit']).toBe('3');
    expectError(await call(ctx.app, 'POST', '/api/v1/customers', { key, body: { not: 'valid' } }), 403, 'insufficient_scope');
    // The limit is used up now: scope still comes first, and the refusal still counts (§8: only ip_restricted
    // and usage_limit_exceeded do not), past the limit.
    const over = await call(ctx.app, 'PUT', '/api/v1/numbering', { key, body: {} });
    expectError(over, 403, 'insufficient_scope');
    expect(over.headers['x-usage-count']).toBe('4');
    const limitedOut = await call(ctx.app, 'GET', '/api/v1/customers', { key });
    expectError(limitedOut, 403, 'usage_limit_exceeded');
    expect(limitedOut.headers['x-usage-count']).toBe('4');
    // So does a refusal for a missing add-on.
    const noAddon = await call(ctx.app, 'GET', '/api/v1/numbering', { key: limited.key });
    expectError(noAddon, 403, 'addon_required');
    expect(noAddon.headers['x-usage-count']).toBe('5');
    expect(noAddon.headers['x-usage-limit']).toBe('3');
  });

  it('a key with the scope but not the add-on gets addon_required', async () => {
    const noAddons = await makeCompany(ctx.database, { addons: [] });
    const key = (await createVia(ctx.app, noAddons.key, '/api_keys', { scopes: ['numbering:read'] })).api_key as string;
    expectError(await call(ctx.app, 'GET', '/api/v1/numbering', { key }), 403, 'addon_required');
  });

  it('the 403 answer and its code are documented with an example', () => {
    const full = ctx.app.swagger() as { components: { responses: Record<string, any>; schemas: Record<string, any> } };
    const forbidden = full.components.responses.Forbidden;
    expect(forbidden.description).toContain('insufficient_scope');
    expect(forbidden.content['application/json'].examples.insufficient_scope.value.error).toMatchObject({ code: 'insufficient_scope' });
    expect(JSON.stringify(full.components.schemas.ErrorCode)).toContain('insufficient_scope');
  });
});

describe('a key manages keys only within its own scopes', () => {
  it('needs api_keys:write to manage keys; api_keys:read only reads them', async () => {
    const reader = await keyWith(['api_keys:read']);
    expect((await call(ctx.app, 'GET', '/api/v1/api_keys', { key: reader })).status).toBe(200);
    expectError(await call(ctx.app, 'POST', '/api/v1/api_keys', { key: reader, body: { scopes: ['api_keys:read'] } }), 403, 'insufficient_scope');
  });

  it('cannot mint a wider key, nor widen, roll or revoke one', async () => {
    const manager = await keyWith(['api_keys:write', 'invoices:write']);
    for (const scopes of [['*'], ['payments:read'], ['invoices:write', 'customers:read']]) {
      const response = await call(ctx.app, 'POST', '/api/v1/api_keys', { key: manager, body: { scopes } });
      expectError(response, 400, 'validation_error', 'scopes');
    }
    // Within its scopes: fine, write implying read.
    const narrow = await createVia(ctx.app, manager, '/api_keys', { scopes: ['invoices:read', 'api_keys:read'] });
    expect(narrow.scopes).toEqual(['invoices:read', 'api_keys:read']);
    const widened = await call(ctx.app, 'PATCH', `/api/v1/api_keys/${narrow.uuid}`, { key: manager, body: { scopes: ['invoices:write'] } });
    expect(widened.status, JSON.stringify(widened.body)).toBe(200);
    expectError(
      await call(ctx.app, 'PATCH', `/api/v1/api_keys/${narrow.uuid}`, { key: manager, body: { scopes: ['payments:write'] } }),
      400,
      'validation_error',
      'scopes',
    );

    // A wider key made by the company's * key is out of its reach.
    const wide = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['invoices:write', 'payments:write'] });
    for (const [method, path, body] of [
      ['PATCH', `/api/v1/api_keys/${wide.uuid}`, { name: 'mine now' }],
      ['POST', `/api/v1/api_keys/${wide.uuid}/roll`, {}],
      ['DELETE', `/api/v1/api_keys/${wide.uuid}`, undefined],
    ] as const) {
      expectError(await call(ctx.app, method, path, { key: manager, body }), 400, 'validation_error');
    }
    // Nothing changed: the wide key still works and keeps its scopes.
    expect((await call(ctx.app, 'GET', '/api/v1/payments', { key: wide.api_key })).status).toBe(200);
    const after = await call(ctx.app, 'GET', `/api/v1/api_keys/${wide.uuid}`, { key: company.key });
    expect(after.body.data).toMatchObject({ name: null, revoked_at: null, key_prefix: wide.key_prefix });
  });

  it('a * key may make any key; a key may roll and revoke itself', async () => {
    const all = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['*'] });
    expect(all.scopes).toEqual(['*']);
    // "*" is a whole answer: listed with other scopes it is refused, not read as one of them.
    expectError(await call(ctx.app, 'POST', '/api/v1/api_keys', { key: company.key, body: { scopes: ['*', 'jobs:read'] } }), 400, 'validation_error', 'scopes');
    const self = await createVia(ctx.app, company.key, '/api_keys', { scopes: ['api_keys:write'] });
    const rolled = await call(ctx.app, 'POST', `/api/v1/api_keys/${self.uuid}/roll`, { key: self.api_key });
    expect(rolled.status, JSON.stringify(rolled.body)).toBe(200);
    const revoked = await call(ctx.app, 'DELETE', `/api/v1/api_keys/${self.uuid}`, { key: rolled.body.data.api_key });
    expect(revoked.status).toBe(200);
    expectError(await call(ctx.app, 'GET', '/api/v1/api_keys', { key: rolled.body.data.api_key }), 401, 'unauthorized');
  });
});
