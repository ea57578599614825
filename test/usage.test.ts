import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { setCompany } from '../src/modules/admin/provisioning.service.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeKey } from './helpers/factories.js';
import { expectError } from './helpers/conventions.js';

const ctx = await buildTestApp({ env: { AUTH_CACHE_TTL_MS: '0' } });

function nextMonthStart(now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
}

const me = '/api/v1/companies/me';

describe('monthly usage limit', () => {
  it('counts each request in X-Usage-Count and refuses the one past the limit with 403 usage_limit_exceeded', async () => {
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 3 });
    const resets = nextMonthStart();
    for (const expected of ['1', '2', '3']) {
      const response = await call(ctx.app, 'GET', me, { key: company.key });
      expect(response.status).toBe(200);
      expect(response.body.data.uuid).toBe(company.companyId);
      expect(response.headers['x-usage-count']).toBe(expected);
      expect(response.headers['x-usage-limit']).toBe('3');
      expect(response.headers['x-usage-resets']).toBe(resets);
    }
    const refused = await call(ctx.app, 'GET', me, { key: company.key });
    expectError(refused, 403, 'usage_limit_exceeded');
    expect(refused.headers['x-usage-count']).toBe('3');
    expect(refused.headers['x-usage-limit']).toBe('3');
    expect(refused.headers['x-usage-resets']).toBe(resets);

    // Refused requests do not count: the count stays at the limit.
    const again = await call(ctx.app, 'GET', '/api/v1/customers', { key: company.key });
    expectError(again, 403, 'usage_limit_exceeded');
    expect(again.headers['x-usage-count']).toBe('3');
  });

  it('gives X-Usage-Resets as the first instant of next month in UTC', async () => {
    const company = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'GET', me, { key: company.key });
    const resets = response.headers['x-usage-resets'] as string;
    expect(resets).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    expect(resets).toBe(nextMonthStart());
    expect(new Date(resets).getTime()).toBeGreaterThan(Date.now());
  });

  it('counts per company, every key of the company together', async () => {
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 2 });
    const other = await makeCompany(ctx.database, { monthlyRequestLimit: 2 });
    const second = await makeKey(ctx.database, company.companyId);
    expect((await call(ctx.app, 'GET', me, { key: company.key })).headers['x-usage-count']).toBe('1');
    expect((await call(ctx.app, 'GET', me, { key: second.api_key })).headers['x-usage-count']).toBe('2');
    expectError(await call(ctx.app, 'GET', me, { key: second.api_key }), 403, 'usage_limit_exceeded');
    const fresh = await call(ctx.app, 'GET', me, { key: other.key });
    expect(fresh.status).toBe(200);
    expect(fresh.headers['x-usage-count']).toBe('1');
  });

  it('counts failed requests (400, 404) as well', async () => {
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 10 });
    const invalid = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: { bogus: true } });
    expectError(invalid, 400, 'validation_error');
    expect(invalid.headers['x-usage-count']).toBe('1');
    const missing = await call(ctx.app, 'GET', '/api/v1/customers/019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70', { key: company.key });
    expectError(missing, 404, 'not_found');
    expect(missing.headers['x-usage-count']).toBe('2');
    expect((await call(ctx.app, 'GET', me, { key: company.key })).headers['x-usage-count']).toBe('3');
  });

  it('does not count requests refused as ip_restricted', async () => {
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 5 });
    const { api_key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['10.0.0.1'] });
    const headers = { authorization: `Bearer ${api_key}` };
    for (let i = 0; i < 3; i++) {
      const refused = await ctx.app.inject({ method: 'GET', url: me, headers, remoteAddress: '10.0.0.2' });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error.code).toBe('ip_restricted');
    }
    const allowed = await ctx.app.inject({ method: 'GET', url: me, headers, remoteAddress: '10.0.0.1' });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.headers['x-usage-count']).toBe('1');
  });

  it('does count requests refused as addon_required, with the usage headers on the 403', async () => {
    const company = await makeCompany(ctx.database, { addons: [], monthlyRequestLimit: 5 });
    const refused = await call(ctx.app, 'GET', '/api/v1/numbering', { key: company.key });
    expectError(refused, 403, 'addon_required');
    expect(refused.headers['x-usage-count']).toBe('1');
    expect(refused.headers['x-usage-limit']).toBe('5');
    expect(refused.headers['x-usage-resets']).toBe(nextMonthStart());
    const next = await call(ctx.app, 'GET', me, { key: company.key });
    expect(next.status).toBe(200);
    expect(next.headers['x-usage-count']).toBe('2');
  });

  it('sends X-Usage-Count and X-Usage-Resets but no X-Usage-Limit for an unlimited company', async () => {
    const company = await makeCompany(ctx.database);
    const first = await call(ctx.app, 'GET', me, { key: company.key });
    const second = await call(ctx.app, 'GET', me, { key: company.key });
    expect(first.status).toBe(200);
    expect(first.headers['x-usage-count']).toBe('1');
    expect(second.headers['x-usage-count']).toBe('2');
    expect(first.headers['x-usage-resets']).toBe(nextMonthStart());
    expect(first.headers).not.toHaveProperty('x-usage-limit');
    expect(second.headers).not.toHaveProperty('x-usage-limit');
  });

  it('sends no usage headers on a 401 or on public endpoints', async () => {
    const unauthorized = await call(ctx.app, 'GET', me);
    expectError(unauthorized, 401, 'unauthorized');
    expect(unauthorized.headers).not.toHaveProperty('x-usage-count');
    const health = await call(ctx.app, 'GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.headers).not.toHaveProperty('x-usage-count');
  });

  it('applies a raised or removed limit to a company that was refused', async () => {
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 1 });
    expect((await call(ctx.app, 'GET', me, { key: company.key })).status).toBe(200);
    expectError(await call(ctx.app, 'GET', me, { key: company.key }), 403, 'usage_limit_exceeded');

    await setCompany(ctx.database.db, { companyId: company.companyId, monthlyRequestLimit: 2 });
    const raised = await call(ctx.app, 'GET', me, { key: company.key });
    expect(raised.status).toBe(200);
    expect(raised.headers['x-usage-count']).toBe('2');
    expect(raised.headers['x-usage-limit']).toBe('2');

    await setCompany(ctx.database.db, { companyId: company.companyId, monthlyRequestLimit: null });
    const unlimited = await call(ctx.app, 'GET', me, { key: company.key });
    expect(unlimited.status).toBe(200);
    expect(unlimited.headers['x-usage-count']).toBe('3');
    expect(unlimited.headers).not.toHaveProperty('x-usage-limit');
  });

  it('shares the count between two instances on one database', async () => {
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 5 });
    const other = await buildApp({ config: ctx.config, database: ctx.database });
    await other.ready();
    try {
      expect((await call(ctx.app, 'GET', me, { key: company.key })).headers['x-usage-count']).toBe('1');
      await ctx.app.deps.usage.flush();

      const b1 = await call(other, 'GET', me, { key: company.key });
      expect(b1.status).toBe(200);
      expect(b1.headers['x-usage-count']).toBe('2');
      expect((await call(other, 'GET', me, { key: company.key })).headers['x-usage-count']).toBe('3');
      await other.deps.usage.flush();
      await ctx.app.deps.usage.flush();

      const a2 = await call(ctx.app, 'GET', me, { key: company.key });
      expect(a2.status).toBe(200);
      expect(a2.headers['x-usage-count']).toBe('4');
      expect((await call(ctx.app, 'GET', me, { key: company.key })).headers['x-usage-count']).toBe('5');
      const refused = await call(ctx.app, 'GET', me, { key: company.key });
      expectError(refused, 403, 'usage_limit_exceeded');
      expect(refused.headers['x-usage-count']).toBe('5');

      await ctx.app.deps.usage.flush();
      await other.deps.usage.flush();
      expectError(await call(other, 'GET', me, { key: company.key }), 403, 'usage_limit_exceeded');
    } finally {
      await other.close();
    }
  });

  it('keeps the count when a new instance starts on the same database', async () => {
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 100 });
    for (let i = 0; i < 3; i++) expect((await call(ctx.app, 'GET', me, { key: company.key })).status).toBe(200);
    await ctx.app.deps.usage.flush();
    const restarted = await buildApp({ config: ctx.config, database: ctx.database });
    await restarted.ready();
    try {
      const response = await call(restarted, 'GET', me, { key: company.key });
      expect(response.status).toBe(200);
      expect(response.headers['x-usage-count']).toBe('4');
    } finally {
      await restarted.close();
    }
  });
});

describe('rate limiting', () => {
  it('refuses the request past RATE_LIMIT_PER_MINUTE with 429 rate_limited, per key', async () => {
    const limited = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
    const company = await makeCompany(limited.database);
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await call(limited.app, 'GET', me, { key: company.key });
      expect(response.status).toBe(200);
      expect(response.headers['x-ratelimit-limit']).toBe('3');
      remaining.push(response.headers['x-ratelimit-remaining'] as string);
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const refused = await call(limited.app, 'GET', me, { key: company.key });
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.headers['x-ratelimit-limit']).toBe('3');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['x-request-id']).toBeTruthy();
    // A rate-limited request is an authenticated request: it counts.
    expect(refused.headers['x-usage-count']).toBe('4');

    const otherKey = await makeKey(limited.database, company.companyId);
    expect((await call(limited.app, 'GET', me, { key: otherKey.api_key })).status).toBe(200);
    const otherCompany = await makeCompany(limited.database);
    const passes = await call(limited.app, 'GET', me, { key: otherCompany.key });
    expect(passes.status).toBe(200);
    expect(passes.body.data.uuid).toBe(otherCompany.companyId);

    // Public endpoints are not rate limited.
    for (let i = 0; i < 5; i++) expect((await call(limited.app, 'GET', '/healthz')).status).toBe(200);
    await limited.close();
  });

  it('answers 403 before 429 for a key over both limits', async () => {
    const limited = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2', AUTH_CACHE_TTL_MS: '0' } });
    const company = await makeCompany(limited.database, { addons: [] });
    expect((await call(limited.app, 'GET', me, { key: company.key })).status).toBe(200);
    expect((await call(limited.app, 'GET', me, { key: company.key })).status).toBe(200);
    expectError(await call(limited.app, 'GET', me, { key: company.key }), 429, 'rate_limited');
    expectError(await call(limited.app, 'GET', '/api/v1/numbering', { key: company.key }), 403, 'addon_required');
    await limited.close();
  });

  it('is off when RATE_LIMIT_PER_MINUTE is 0', async () => {
    const company = await makeCompany(ctx.database);
    expect(ctx.config.RATE_LIMIT_PER_MINUTE).toBe(0);
    for (let i = 0; i < 5; i++) {
      const response = await call(ctx.app, 'GET', me, { key: company.key });
      expect(response.status).toBe(200);
      expect(response.headers).not.toHaveProperty('x-ratelimit-limit');
    }
  });
});
