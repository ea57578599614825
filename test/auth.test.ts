import { describe, expect, it } from 'vitest';
import { revokeApiKey } from '../src/modules/admin/provisioning.service.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeKey } from './helpers/factories.js';
import { expectError } from './helpers/conventions.js';

// TTL 0: a revoked key or a changed company setting is seen by the very next request.
const ctx = await buildTestApp({ env: { AUTH_CACHE_TTL_MS: '0' } });

const UNKNOWN_KEY = `fsc_live_${'A'.repeat(43)}`;

async function get(url: string, options: { headers?: Record<string, string>; remoteAddress?: string } = {}) {
  const response = await ctx.app.inject({ method: 'GET', url, headers: options.headers, remoteAddress: options.remoteAddress });
  let body: any;
  try {
    body = response.json();
  } catch {
    body = undefined;
  }
  return { status: response.statusCode, body, headers: response.headers };
}

describe('API key authentication', () => {
  it('refuses a request without any key with 401 unauthorized', async () => {
    expectError(await call(ctx.app, 'GET', '/api/v1/companies/me'), 401, 'unauthorized');
    expectError(await call(ctx.app, 'GET', '/api/v1/customers'), 401, 'unauthorized');
  });

  it('refuses a key sent with a scheme other than Bearer', async () => {
    const company = await makeCompany(ctx.database);
    expectError(
      await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { authorization: `Basic ${company.key}` } }),
      401,
      'unauthorized',
    );
    expectError(
      await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { authorization: company.key } }),
      401,
      'unauthorized',
    );
    expectError(
      await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { authorization: 'Bearer' } }),
      401,
      'unauthorized',
    );
  });

  it('refuses malformed keys', async () => {
    const company = await makeCompany(ctx.database);
    for (const key of ['abc', 'fsc_live_short', `${company.key}x`, company.key.slice(0, -1), `fsc_test_${'A'.repeat(43)}`]) {
      expectError(await call(ctx.app, 'GET', '/api/v1/companies/me', { key }), 401, 'unauthorized');
    }
  });

  it('refuses a well-formed key that was never issued', async () => {
    expectError(await call(ctx.app, 'GET', '/api/v1/companies/me', { key: UNKNOWN_KEY }), 401, 'unauthorized');
    expectError(
      await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { 'x-api-key': UNKNOWN_KEY } }),
      401,
      'unauthorized',
    );
  });

  it('accepts a Bearer key case-insensitively on the scheme and the X-API-Key header', async () => {
    const company = await makeCompany(ctx.database);
    const bearer = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key });
    expect(bearer.status).toBe(200);
    expect(bearer.body).toMatchObject({ success: true, data: { uuid: company.companyId } });

    const lower = await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { authorization: `bearer ${company.key}` } });
    expect(lower.status).toBe(200);
    expect(lower.body.data.uuid).toBe(company.companyId);

    const header = await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { 'x-api-key': company.key } });
    expect(header.status).toBe(200);
    expect(header.body).toMatchObject({ success: true, data: { uuid: company.companyId } });

    // A proxy's credentials in Authorization leave the key to X-API-Key; a Bearer key is still the one used.
    const basic = { authorization: `Basic ${Buffer.from('proxy:secret').toString('base64')}` };
    const behindProxy = await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { ...basic, 'x-api-key': company.key } });
    expect(behindProxy.status).toBe(200);
    expectError(await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: basic }), 401, 'unauthorized');
    const wrongBearer = { authorization: `Bearer ${UNKNOWN_KEY}`, 'x-api-key': company.key };
    expectError(await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: wrongBearer }), 401, 'unauthorized');
  });

  it('gives each key the data of its own company only', async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const second = await makeKey(ctx.database, a.companyId);
    const viaSecond = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: second.api_key });
    expect(viaSecond.status).toBe(200);
    expect(viaSecond.body.data.uuid).toBe(a.companyId);
    const viaB = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: b.key });
    expect(viaB.body.data.uuid).toBe(b.companyId);
  });

  it('refuses a revoked key at once when the cache TTL is 0, while other keys keep working', async () => {
    const company = await makeCompany(ctx.database);
    const extra = await makeKey(ctx.database, company.companyId);
    expect((await call(ctx.app, 'GET', '/api/v1/companies/me', { key: extra.api_key })).status).toBe(200);

    expect(await revokeApiKey(ctx.database.db, extra.key_prefix)).toEqual({ revoked: true });

    expectError(await call(ctx.app, 'GET', '/api/v1/companies/me', { key: extra.api_key }), 401, 'unauthorized');
    expectError(
      await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { 'x-api-key': extra.api_key } }),
      401,
      'unauthorized',
    );
    expect((await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key })).status).toBe(200);
  });
});

describe('revocation with the default key cache', () => {
  it('refuses a revoked key within 5 seconds', async () => {
    const cached = await buildTestApp();
    expect(cached.config.AUTH_CACHE_TTL_MS).toBeLessThanOrEqual(5000);
    const company = await makeCompany(cached.database);
    const extra = await makeKey(cached.database, company.companyId);
    expect((await call(cached.app, 'GET', '/api/v1/companies/me', { key: extra.api_key })).status).toBe(200);

    await revokeApiKey(cached.database.db, extra.key_prefix);
    const revokedAt = Date.now();
    let status = 200;
    while (Date.now() - revokedAt < 5000) {
      const response = await call(cached.app, 'GET', '/api/v1/companies/me', { key: extra.api_key });
      status = response.status;
      if (status === 401) {
        expectError(response, 401, 'unauthorized');
        break;
      }
      expect(status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(5000);
    await cached.close();
  });
});

describe('IP allow-lists', () => {
  const me = '/api/v1/companies/me';

  it('allows addresses inside an IPv4 CIDR and refuses others with 403 ip_restricted', async () => {
    const company = await makeCompany(ctx.database);
    const { api_key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['10.0.0.0/8'] });
    const inside = await get(me, { headers: { authorization: `Bearer ${api_key}` }, remoteAddress: '10.200.3.4' });
    expect(inside.status).toBe(200);
    expect(inside.body.data.uuid).toBe(company.companyId);
    expectError(await get(me, { headers: { authorization: `Bearer ${api_key}` }, remoteAddress: '11.0.0.1' }), 403, 'ip_restricted');
    expectError(await get(me, { headers: { authorization: `Bearer ${api_key}` }, remoteAddress: '127.0.0.1' }), 403, 'ip_restricted');
  });

  it('matches an exact IPv4 address and nothing next to it', async () => {
    const company = await makeCompany(ctx.database);
    const { api_key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['203.0.113.7'] });
    const headers = { authorization: `Bearer ${api_key}` };
    expect((await get(me, { headers, remoteAddress: '203.0.113.7' })).status).toBe(200);
    expectError(await get(me, { headers, remoteAddress: '203.0.113.8' }), 403, 'ip_restricted');
  });

  it('matches IPv6 CIDRs and exact IPv6 addresses', async () => {
    const company = await makeCompany(ctx.database);
    const { api_key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['2001:db8::/32', 'fd00::1'] });
    const headers = { authorization: `Bearer ${api_key}` };
    expect((await get(me, { headers, remoteAddress: '2001:db8:1::5' })).status).toBe(200);
    expect((await get(me, { headers, remoteAddress: 'fd00::1' })).status).toBe(200);
    expectError(await get(me, { headers, remoteAddress: '2001:db9::1' }), 403, 'ip_restricted');
    expectError(await get(me, { headers, remoteAddress: 'fd00::2' }), 403, 'ip_restricted');
    expectError(await get(me, { headers, remoteAddress: '10.0.0.1' }), 403, 'ip_restricted');
  });

  it('treats an IPv4-mapped IPv6 socket address as its IPv4 address', async () => {
    const company = await makeCompany(ctx.database);
    const { api_key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['10.0.0.0/8'] });
    const headers = { authorization: `Bearer ${api_key}` };
    expect((await get(me, { headers, remoteAddress: '::ffff:10.1.2.3' })).status).toBe(200);
    expectError(await get(me, { headers, remoteAddress: '::ffff:192.168.1.1' }), 403, 'ip_restricted');
  });

  it('lets a key with any of several entries in and applies to the X-API-Key header too', async () => {
    const company = await makeCompany(ctx.database);
    const { api_key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['192.168.0.0/16', '10.9.9.9'] });
    expect((await get(me, { headers: { 'x-api-key': api_key }, remoteAddress: '192.168.44.1' })).status).toBe(200);
    expect((await get(me, { headers: { 'x-api-key': api_key }, remoteAddress: '10.9.9.9' })).status).toBe(200);
    expectError(await get(me, { headers: { 'x-api-key': api_key }, remoteAddress: '10.9.9.8' }), 403, 'ip_restricted');
  });

  it('lets a key without an allow-list in from anywhere', async () => {
    const company = await makeCompany(ctx.database);
    const headers = { authorization: `Bearer ${company.key}` };
    expect((await get(me, { headers, remoteAddress: '198.51.100.1' })).status).toBe(200);
    expect((await get(me, { headers, remoteAddress: '2001:db8::1' })).status).toBe(200);
  });
});

describe('add-ons', () => {
  it('refuses the numbering endpoints with 403 addon_required when the company has no add-ons', async () => {
    const company = await makeCompany(ctx.database, { addons: [] });
    expectError(await call(ctx.app, 'GET', '/api/v1/numbering', { key: company.key }), 403, 'addon_required');
    expectError(
      await call(ctx.app, 'PUT', '/api/v1/numbering', { key: company.key, body: { invoice: { prefix: 'A-' } } }),
      403,
      'addon_required',
    );
    // Endpoints that need no add-on still work.
    expect((await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key })).status).toBe(200);
    expect((await call(ctx.app, 'GET', '/api/v1/customers', { key: company.key })).status).toBe(200);
  });

  it('allows the numbering endpoints with the numbering add-on only', async () => {
    const withNumbering = await makeCompany(ctx.database, { addons: ['numbering'] });
    const ok = await call(ctx.app, 'GET', '/api/v1/numbering', { key: withNumbering.key });
    expect(ok.status).toBe(200);
    expect(ok.body.success).toBe(true);
    const photosOnly = await makeCompany(ctx.database, { addons: ['photos'] });
    expectError(await call(ctx.app, 'GET', '/api/v1/numbering', { key: photosOnly.key }), 403, 'addon_required');
  });

  it('gives a company made without an add-on list every add-on', async () => {
    const company = await makeCompany(ctx.database);
    expect((await call(ctx.app, 'GET', '/api/v1/numbering', { key: company.key })).status).toBe(200);
  });
});

describe('order of checks', () => {
  it('answers 401 before looking at a malformed JSON body', async () => {
    expectError(await call(ctx.app, 'POST', '/api/v1/customers', { key: UNKNOWN_KEY, rawBody: '{"first_name":' }), 401, 'unauthorized');
    expectError(await call(ctx.app, 'POST', '/api/v1/customers', { rawBody: '{not json' }), 401, 'unauthorized');
  });

  it('answers 401 before validating the query or the path', async () => {
    expectError(await call(ctx.app, 'GET', '/api/v1/customers?page=0&bogus=1'), 401, 'unauthorized');
    expectError(await call(ctx.app, 'GET', '/api/v1/locations/not-a-uuid'), 401, 'unauthorized');
  });

  it('answers 401 for an unknown path under /api/v1 without a key, 404 with one', async () => {
    expectError(await call(ctx.app, 'GET', '/api/v1/no-such-thing'), 401, 'unauthorized');
    const company = await makeCompany(ctx.database);
    expectError(await call(ctx.app, 'GET', '/api/v1/no-such-thing', { key: company.key }), 404, 'not_found');
  });

  it('answers 403 addon_required before validating the body', async () => {
    const company = await makeCompany(ctx.database, { addons: [] });
    expectError(
      await call(ctx.app, 'PUT', '/api/v1/numbering', { key: company.key, body: { invoice: { padding: 'wide' }, bogus: 1 } }),
      403,
      'addon_required',
    );
    expectError(
      await call(ctx.app, 'PUT', '/api/v1/numbering', { key: company.key, rawBody: '{broken' }),
      403,
      'addon_required',
    );
  });

  it('answers ip_restricted before addon_required', async () => {
    const company = await makeCompany(ctx.database, { addons: [] });
    const { api_key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['10.0.0.1'] });
    expectError(
      await get('/api/v1/numbering', { headers: { authorization: `Bearer ${api_key}` }, remoteAddress: '10.0.0.2' }),
      403,
      'ip_restricted',
    );
    expectError(
      await get('/api/v1/numbering', { headers: { authorization: `Bearer ${api_key}` }, remoteAddress: '10.0.0.1' }),
      403,
      'addon_required',
    );
  });

  it('answers ip_restricted before validating the body', async () => {
    const company = await makeCompany(ctx.database);
    const { api_key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['10.0.0.1'] });
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' },
      payload: '{broken',
      remoteAddress: '10.0.0.2',
    });
    expectError({ status: response.statusCode, body: response.json() }, 403, 'ip_restricted');
  });

  it('answers 400 for a bad body only once the key is good', async () => {
    const company = await makeCompany(ctx.database);
    expectError(await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, rawBody: '{broken' }), 400, 'validation_error');
  });
});

describe('public endpoints', () => {
  it('serves /healthz without a key', async () => {
    const response = await call(ctx.app, 'GET', '/healthz');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, data: { status: 'ok' } });
  });

  it('serves /readyz without a key', async () => {
    const response = await call(ctx.app, 'GET', '/readyz');
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    expect(typeof response.body.data.status).toBe('string');
  });

  it('serves the OpenAPI document without a key', async () => {
    const response = await call(ctx.app, 'GET', '/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toMatch(/^3\./);
    expect(Object.keys(response.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/locations', '/api/v1/customers/{uuid}', '/api/v1/companies/me']),
    );
  });

  it('serves /docs without a key', async () => {
    const response = await ctx.app.inject({ method: 'GET', url: '/docs' });
    expect([200, 301, 302]).toContain(response.statusCode);
    if (response.statusCode !== 200) {
      const followed = await ctx.app.inject({ method: 'GET', url: new URL(response.headers.location as string, 'http://x/docs/').pathname });
      expect(followed.statusCode).toBe(200);
      expect(followed.body).toMatch(/Scalar.createApiReference/);
    } else {
      expect(response.body).toMatch(/Scalar.createApiReference/);
    }
  });

  it('answers an unknown path outside /api/v1 with the 404 envelope', async () => {
    expectError(await call(ctx.app, 'GET', '/nope'), 404, 'not_found');
    expectError(await call(ctx.app, 'POST', '/api/v2/customers'), 404, 'not_found');
  });

  it('answers an unknown method on a known path with 405 and Allow, after the key check', async () => {
    const company = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/companies/me', { key: company.key, body: {} });
    expectError(response, 405, 'method_not_allowed');
    expect(response.headers.allow).toBe('GET, HEAD');
    expectError(await call(ctx.app, 'POST', '/api/v1/companies/me', { body: {} }), 401, 'unauthorized');
    expectError(await call(ctx.app, 'GET', '/api/v1/no-such-thing', { key: company.key }), 404, 'not_found');
  });
});

describe('request ids', () => {
  it('gives every response an x-request-id, success and error alike', async () => {
    const company = await makeCompany(ctx.database);
    const responses = [
      await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key }),
      await call(ctx.app, 'GET', '/api/v1/companies/me'),
      await call(ctx.app, 'GET', '/healthz'),
      await call(ctx.app, 'GET', '/nope'),
    ];
    const ids = responses.map((response) => response.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(/^\S{8,}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('echoes the x-request-id the client sent', async () => {
    const company = await makeCompany(ctx.database);
    const ok = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key, headers: { 'x-request-id': 'client-req-42' } });
    expect(ok.status).toBe(200);
    expect(ok.headers['x-request-id']).toBe('client-req-42');
    const refused = await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { 'x-request-id': 'client-req-43' } });
    expect(refused.status).toBe(401);
    expect(refused.headers['x-request-id']).toBe('client-req-43');
    expect(refused.body.error.request_id).toBe('client-req-43');
    // Trace ids of other shapes too: slashes, plus and equals signs (base64), spaces, up to 255 characters.
    for (const sent of ['abc/123', 'dGVzdA+/=', 'has space', `{${'a'.repeat(253)}}`]) {
      const echoed = await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { 'x-request-id': sent } });
      expect(echoed.headers['x-request-id']).toBe(sent);
      expect(echoed.body.error.request_id).toBe(sent);
    }
    // One that could not be written into a JSON body or a header as it is gets the server's own.
    for (const sent of ['say "hi"', 'back\\slash', 'x'.repeat(256)]) {
      const replaced = await call(ctx.app, 'GET', '/api/v1/companies/me', { headers: { 'x-request-id': sent } });
      expect(replaced.headers['x-request-id']).not.toBe(sent);
      expect(replaced.body.error.request_id).toBe(replaced.headers['x-request-id']);
    }
  });
});

describe('usage headers on every 403 (DECISIONS.md §8)', () => {
  const resets = () => new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1)).toISOString();
  const me = '/api/v1/companies/me';

  function expectUsage(response: { headers: Record<string, unknown> }, count: number, limit: number | null) {
    expect(response.headers['x-usage-count']).toBe(String(count));
    expect(response.headers['x-usage-resets']).toBe(resets());
    if (limit === null) expect(response.headers['x-usage-limit']).toBeUndefined();
    else expect(response.headers['x-usage-limit']).toBe(String(limit));
  }

  for (const limit of [null, 10]) {
    it(`ip_restricted shows the current count without counting (limit ${limit ?? 'none'})`, async () => {
      const company = await makeCompany(ctx.database, { monthlyRequestLimit: limit });
      const { api_key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['10.0.0.1'] });
      const headers = { authorization: `Bearer ${api_key}` };
      const fresh = await get(me, { headers, remoteAddress: '10.0.0.2' });
      expectError(fresh, 403, 'ip_restricted');
      expectUsage(fresh, 0, limit);
      expectUsage(await get(me, { headers, remoteAddress: '10.0.0.1' }), 1, limit);
      expectUsage(await get(me, { headers, remoteAddress: '10.0.0.1' }), 2, limit);
      for (let i = 0; i < 2; i++) {
        const refused = await get(me, { headers, remoteAddress: '10.0.0.9' });
        expectError(refused, 403, 'ip_restricted');
        expectUsage(refused, 2, limit);
      }
      expectUsage(await get(me, { headers, remoteAddress: '10.0.0.1' }), 3, limit);
    });

    it(`addon_required carries the usage headers and counts (limit ${limit ?? 'none'})`, async () => {
      const company = await makeCompany(ctx.database, { addons: [], monthlyRequestLimit: limit });
      const refused = await call(ctx.app, 'GET', '/api/v1/numbering', { key: company.key });
      expectError(refused, 403, 'addon_required');
      expectUsage(refused, 1, limit);
      const upload = await call(ctx.app, 'POST', '/api/v1/jobs/019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70/photos', { key: company.key, body: {} });
      expectError(upload, 403, 'addon_required');
      expectUsage(upload, 2, limit);
    });
  }

  it('usage_limit_exceeded carries the usage headers at the limit and does not count', async () => {
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 2 });
    expectUsage(await call(ctx.app, 'GET', me, { key: company.key }), 1, 2);
    expectUsage(await call(ctx.app, 'GET', me, { key: company.key }), 2, 2);
    for (let i = 0; i < 2; i++) {
      const refused = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: { first_name: 'A', last_name: 'B' } });
      expectError(refused, 403, 'usage_limit_exceeded');
      expectUsage(refused, 2, 2);
    }
  });

  it('ip_restricted after the limit is used up still shows the count', async () => {
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 1 });
    const { api_key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['10.0.0.1'] });
    const headers = { authorization: `Bearer ${api_key}` };
    expectUsage(await get(me, { headers, remoteAddress: '10.0.0.1' }), 1, 1);
    const limited = await get(me, { headers, remoteAddress: '10.0.0.1' });
    expectError(limited, 403, 'usage_limit_exceeded');
    expectUsage(limited, 1, 1);
    const restricted = await get(me, { headers, remoteAddress: '10.0.0.2' });
    expectError(restricted, 403, 'ip_restricted');
    expectUsage(restricted, 1, 1);
  });
});
