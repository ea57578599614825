import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeKey } from './helpers/factories.js';

const ctx = await buildTestApp({ env: { CORS_ORIGINS: 'https://app.example.com', TRUST_PROXY: '127.0.0.1' } });

describe('GET /metrics', () => {
  it('exposes request counts and latency by route pattern and status, and pool usage, without a key', async () => {
    const company = await makeCompany(ctx.database);
    expect((await call(ctx.app, 'GET', '/api/v1/customers', { key: company.key })).status).toBe(200);
    expect((await call(ctx.app, 'GET', '/api/v1/customers/not-a-uuid', { key: company.key })).status).toBe(400);
    const response = await ctx.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.body).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/customers",status_code="200"\} [1-9]/);
    // The pattern, never the raw URL, labels a request.
    expect(response.body).toMatch(/route="\/api\/v1\/customers\/:uuid",status_code="400"/);
    expect(response.body).not.toContain('not-a-uuid');
    expect(response.body).toMatch(/http_request_duration_seconds_bucket\{/);
    if (ctx.databaseUrl) expect(response.body).toMatch(/db_pool_connections\{state="total"\} \d+/);
  });
});

describe('CORS', () => {
  it('answers preflights for the configured origin only, and exposes the usage headers', async () => {
    const allowed = await ctx.app.inject({
      method: 'OPTIONS',
      url: '/api/v1/customers',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
    });
    expect(allowed.statusCode).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const company = await makeCompany(ctx.database);
    const get = await call(ctx.app, 'GET', '/api/v1/customers', { key: company.key, headers: { origin: 'https://app.example.com' } });
    expect(get.headers['access-control-expose-headers']).toContain('x-usage-count');
    expect(get.headers['access-control-expose-headers']).toContain('etag');
    const other = await call(ctx.app, 'GET', '/api/v1/customers', { key: company.key, headers: { origin: 'https://evil.example' } });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('TRUST_PROXY', () => {
  it('takes the client address from X-Forwarded-For when the proxy is trusted', async () => {
    const company = await makeCompany(ctx.database);
    const { api_key: key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['203.0.113.7'] });
    const viaProxy = (forwardedFor: string) =>
      ctx.app.inject({
        method: 'GET',
        url: '/api/v1/companies/me',
        remoteAddress: '127.0.0.1',
        headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': forwardedFor },
      });
    expect((await viaProxy('203.0.113.7')).statusCode).toBe(200);
    const refused = await viaProxy('198.51.100.1');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('ip_restricted');
  });
});

describe('GET /readyz while shutting down', () => {
  it('answers 503 so the load balancer stops sending traffic', async () => {
    const { buildApp } = await import('../src/app.js');
    const app = await buildApp({ config: ctx.config, database: ctx.database });
    await app.ready();
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    app.lifecycle.beginShutdown();
    const draining = await app.inject({ method: 'GET', url: '/readyz' });
    expect(draining.statusCode).toBe(503);
    expect(draining.json().error.code).toBe('service_unavailable');
    expect(draining.headers.connection).toBe('close');
    await app.close();
  });
});
