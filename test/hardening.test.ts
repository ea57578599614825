import { Writable } from 'node:stream';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeBillingSetup, makeInvoiceOf, paymentBody } from './helpers/billing-factories.js';
import { makeCompany, makeCustomer, makeKey, validLocation } from './helpers/factories.js';
import { makeJob, PNG_BYTES, uploadPhotos } from './helpers/jobs-factories.js';
import { idempotencyKeys } from '../src/db/schema/index.js';
import { redactUrl } from '../src/shared/urls.js';
import { and, eq, inArray } from 'drizzle-orm';
import { purgeExpiredKeys } from '../src/modules/idempotency/idempotency.service.js';

const ctx = await buildTestApp({ env: { AUTH_CACHE_TTL_MS: '0' } });
const base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
const me = '/api/v1/companies/me';

/**
 * Sends raw bytes on a new connection and returns everything the server wrote before closing; `halfClose`
 * then ends the client's side, as `printf ... | nc` does.
 */
function rawRequest(bytes: string, { halfClose = false } = {}): Promise<string> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', (error) => (answer ? resolve(answer) : reject(error)));
    socket.on('close', () => resolve(answer));
    if (halfClose) socket.end(bytes);
    else socket.write(bytes);
  });
}

function parseRaw(answer: string) {
  const [head, ...rest] = answer.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n')) };
}

describe('requests the HTTP parser refuses', () => {
  it('answers an over-long URL with 400 validation_error in the envelope and an x-request-id', async () => {
    const company = await makeCompany(ctx.database);
    const response = await fetch(`${base}/api/v1/customers?search=${'a'.repeat(20_000)}`, {
      headers: { authorization: `Bearer ${company.key}` },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await response.json();
    expect(body).toEqual({
      success: false,
      error: { code: 'validation_error', message: 'The URL or the header section is too long.', request_id: expect.any(String) },
    });
  });

  it('answers an over-long header with the same envelope', async () => {
    const answer = parseRaw(await rawRequest(`GET ${me} HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`));
    expect(answer.status).toBe(400);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body.error.code).toBe('validation_error');
  });

  it('answers a malformed request line with the envelope', async () => {
    const answer = parseRaw(await rawRequest('GARBAGE\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.headers['x-request-id']).toBeTruthy();
    expect(answer.body).toMatchObject({ success: false, error: { code: 'validation_error', message: 'The HTTP request is malformed.' } });
  });

  it('answers an HTTP/1.1 request without Host with 400 in the envelope naming the header; HTTP/1.0 needs none', async () => {
    const company = await makeCompany(ctx.database);
    const missing = parseRaw(await rawRequest(`GET ${me} HTTP/1.1\r\nAuthorization: Bearer ${company.key}\r\nConnection: close\r\n\r\n`));
    expect(missing.status).toBe(400);
    expect(missing.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(missing.body.error).toMatchObject({ code: 'validation_error', details: [{ field: 'Host', code: 'required', message: expect.any(String) }] });

    const old = parseRaw(await rawRequest(`GET ${me} HTTP/1.0\r\nAuthorization: Bearer ${company.key}\r\n\r\n`));
    expect(old.status).toBe(200);
    expect(old.body.data.uuid).toBe(company.companyId);
  });

  it('answers a request with an Expect it does not know as any other request, not a bare 417', async () => {
    const company = await makeCompany(ctx.database);
    const answer = parseRaw(await rawRequest(`GET ${me} HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nAuthorization: Bearer ${company.key}\r\nConnection: close\r\n\r\n`));
    expect(answer.status).toBe(200);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.body.data.uuid).toBe(company.companyId);

    const keyless = parseRaw(await rawRequest(`GET ${me} HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n`));
    expect(keyless.status).toBe(401);
    expect(keyless.body.error.code).toBe('unauthorized');
  });

  it('answers a client that half-closes after its request, then closes', async () => {
    const company = await makeCompany(ctx.database);
    const answer = parseRaw(await rawRequest(`GET ${me} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${company.key}\r\n\r\n`, { halfClose: true }));
    expect(answer.status).toBe(200);
    expect(answer.body.data.uuid).toBe(company.companyId);

    const body = JSON.stringify({ first_name: 'Half', last_name: 'Closed' });
    const created = parseRaw(
      await rawRequest(
        `POST /api/v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${company.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        { halfClose: true },
      ),
    );
    expect(created.status).toBe(200);
    expect(created.body.data.first_name).toBe('Half');
  });
});

describe('IP allow-lists in IPv4-mapped IPv6 form', () => {
  const get = (key: string, remoteAddress: string) =>
    ctx.app.inject({ method: 'GET', url: me, headers: { authorization: `Bearer ${key}` }, remoteAddress });

  it('matches a mapped entry against its IPv4 client and the other way round', async () => {
    const company = await makeCompany(ctx.database);
    const { api_key: mapped } = await makeKey(ctx.database, company.companyId, { allowedIps: ['::ffff:127.0.0.1'] });
    expect((await get(mapped, '127.0.0.1')).statusCode).toBe(200);
    expect((await get(mapped, '::ffff:127.0.0.1')).statusCode).toBe(200);
    const refused = await get(mapped, '127.0.0.2');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('ip_restricted');

    const { api_key: plain } = await makeKey(ctx.database, company.companyId, { allowedIps: ['203.0.113.7'] });
    expect((await get(plain, '::ffff:203.0.113.7')).statusCode).toBe(200);
    expect((await get(plain, '::ffff:203.0.113.8')).statusCode).toBe(403);
  });

  it('matches a mapped CIDR as its IPv4 range', async () => {
    const company = await makeCompany(ctx.database);
    const { api_key: key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['::ffff:203.0.113.0/120'] });
    expect((await get(key, '203.0.113.200')).statusCode).toBe(200);
    expect((await get(key, '::ffff:203.0.113.9')).statusCode).toBe(200);
    expect((await get(key, '203.0.114.1')).statusCode).toBe(403);
  });

  it('works over a real connection, whose socket address is what the server sees', async () => {
    const company = await makeCompany(ctx.database);
    const { api_key: key } = await makeKey(ctx.database, company.companyId, { allowedIps: ['::ffff:127.0.0.1'] });
    const response = await fetch(`${base}${me}`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
  });
});

describe('the per-key rate limit', () => {
  it('answers 429 before 404 and 405 (DECISIONS §1: 429, then validation and lookups)', async () => {
    const limited = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      const company = await makeCompany(limited.database);
      const send = (method: 'GET' | 'DELETE', url: string) =>
        limited.app.inject({ method, url, headers: { authorization: `Bearer ${company.key}` } });
      expect((await send('GET', '/api/v1/nowhere')).statusCode).toBe(404);
      expect((await send('DELETE', '/api/v1/customers')).statusCode).toBe(405);
      for (const [method, url] of [['GET', '/api/v1/nowhere'], ['DELETE', '/api/v1/customers'], ['GET', me]] as const) {
        const refused = await send(method, url);
        expect(refused.statusCode, `${method} ${url}`).toBe(429);
        expect(refused.json().error.code).toBe('rate_limited');
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      }
    } finally {
      await limited.close();
    }
  });
});

describe('unauthenticated traffic', () => {
  it('refuses an IP with 429 before any key lookup once it failed too often, but not a known valid key', async () => {
    const limited = await buildTestApp({ env: { UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '3', AUTH_CACHE_TTL_MS: '2000' } });
    const company = await makeCompany(limited.database);
    const fromIp = (key: string | undefined, remoteAddress: string) =>
      limited.app.inject({ method: 'GET', url: me, remoteAddress, headers: key ? { authorization: `Bearer ${key}` } : {} });
    // The valid key is known to the instance before the address starts failing.
    expect((await fromIp(company.key, '198.51.100.4')).statusCode).toBe(200);
    const unknown = `fsc_live_${'A'.repeat(43)}`;
    for (const key of [undefined, 'not-a-key', unknown]) {
      const response = await fromIp(key, '198.51.100.4');
      expect(response.statusCode).toBe(401);
      expect(response.json().error.code).toBe('unauthorized');
    }
    const blocked = await fromIp(`fsc_live_${'B'.repeat(43)}`, '198.51.100.4');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ success: false, error: { code: 'rate_limited' } });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect((await fromIp(undefined, '198.51.100.4')).statusCode).toBe(429);
    // The known valid key still works from that address; another address is not affected.
    expect((await fromIp(company.key, '198.51.100.4')).statusCode).toBe(200);
    expect((await fromIp(undefined, '198.51.100.5')).statusCode).toBe(401);
    await limited.close();
  });

  it('remembers unknown keys apart, without asking the database again', async () => {
    const cached = await buildTestApp({ env: { AUTH_CACHE_TTL_MS: '5000' } });
    const unknown = `fsc_live_${'C'.repeat(43)}`;
    const first = await call(cached.app, 'GET', me, { key: unknown });
    expect(first.status).toBe(401);
    // With the database gone, a remembered unknown key is still 401; a new one needs the database.
    await cached.database.close();
    const again = await call(cached.app, 'GET', me, { key: unknown });
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('unauthorized');
    const fresh = await call(cached.app, 'GET', me, { key: `fsc_live_${'D'.repeat(43)}` });
    expect(fresh.status).toBeGreaterThanOrEqual(500);
    await cached.close();
  });
});

describe('configuration refused at start', () => {
  it('refuses TRUST_PROXY=true with a clear error and accepts hop counts and addresses', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY: true is refused: it would let any client choose its IP address/);
    expect(loadConfig({ TRUST_PROXY: '1' }).TRUST_PROXY).toBe('1');
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8,127.0.0.1' }).TRUST_PROXY).toBe('10.0.0.0/8,127.0.0.1');
  });

  it('warns at start in production when PUBLIC_BASE_URL or PHOTO_URL_SECRET is unset', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const production = await buildApp({
      config: { ...ctx.config, NODE_ENV: 'production', PUBLIC_BASE_URL: undefined, PHOTO_URL_SECRET: undefined },
      database: ctx.database,
      logger: { level: 'warn', stream },
    });
    await production.close();
    expect(lines.join('')).toMatch(/PUBLIC_BASE_URL is not set/);
    expect(lines.join('')).toMatch(/PHOTO_URL_SECRET is not set/);
    const configured = await buildApp({
      config: { ...ctx.config, NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com', PHOTO_URL_SECRET: 'shared-secret' },
      database: ctx.database,
      logger: { level: 'warn', stream },
    });
    await configured.close();
    expect(lines.join('').match(/PUBLIC_BASE_URL is not set/g)).toHaveLength(1);
    expect(lines.join('').match(/PHOTO_URL_SECRET is not set/g)).toHaveLength(1);
  });
});

/** An object nested `depth` levels deep (the outer object is level 1), built without recursion. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < depth; level++) value = { level: value };
  return value;
}

/** The same nesting as raw JSON text, for depths JSON.stringify itself cannot write. */
function deepJson(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{"leaf":true}${'}'.repeat(depth - 1)}`;
}

describe('free-form objects are bounded in depth and size', () => {
  function expectNamed(response: { status: number; body: any }, field: string) {
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    expect(response.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  }

  it('accepts 32 levels and refuses 33 or thousands with 400 naming the field, on every free-form field', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, company.key);
    const setup = await makeBillingSetup(ctx.app, ctx.database);
    const invoice = await makeInvoiceOf(ctx.app, setup, 100);
    const cases: Array<{ path: string; key: string; body: (value: string) => string; field: string }> = [
      { path: '/api/v1/customers', key: company.key, field: 'internal_flags', body: (v) => `{"first_name":"A","last_name":"B","internal_flags":${v}}` },
      { path: `/api/v1/customers/${customer.uuid}`, key: company.key, field: 'internal_flags', body: (v) => `{"internal_flags":${v}}` },
      ...(['business_hours', 'default_tax_rules', 'service_types_offered'] as const).map((field) => ({
        path: '/api/v1/locations',
        key: company.key,
        field,
        body: (v: string) => JSON.stringify(validLocation()).replace(/}$/, `,"${field}":${v}}`),
      })),
      {
        path: '/api/v1/payments',
        key: setup.company.key,
        field: 'payment_details',
        body: (v) => JSON.stringify(paymentBody(invoice.uuid, 1)).replace(/}$/, `,"payment_details":${v}}`),
      },
    ];
    for (const { path, key, body, field } of cases) {
      const method = path.split('/').length > 4 ? 'PATCH' : 'POST';
      expectNamed(await call(ctx.app, method, path, { key, rawBody: body(deepJson(33)) }), field);
      expectNamed(await call(ctx.app, method, path, { key, rawBody: body(deepJson(5_000)) }), field);
      expectNamed(await call(ctx.app, method, path, { key, rawBody: body(`{"list":${'['.repeat(40)}1${']'.repeat(40)}}`) }), field);
      const accepted = await call(ctx.app, method, path, { key, rawBody: body(JSON.stringify(nested(32))) });
      expect(accepted.status, `${path} ${JSON.stringify(accepted.body)}`).toBe(200);
      expect(accepted.body.data[field]).toEqual(nested(32));
    }
  });

  it('refuses a free-form object over 64 KiB as JSON and deep JSON anywhere else with 400, never 500', async () => {
    const company = await makeCompany(ctx.database);
    const big = { notes: 'x'.repeat(70_000) };
    expectNamed(await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: { first_name: 'A', last_name: 'B', internal_flags: big } }), 'internal_flags');
    for (const rawBody of [deepJson(100_000), `${'['.repeat(100_000)}${']'.repeat(100_000)}`, `{"first_name":${deepJson(50_000)}}`]) {
      const response = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, rawBody });
      expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
    }
    const estimate = await call(ctx.app, 'POST', '/api/v1/estimates/preview', { key: company.key, rawBody: `{"adjustments":${deepJson(10_000)}}` });
    expect(estimate.status).toBe(400);
  });
});

describe('absolute links and the files they serve', () => {
  it('builds links only from a plain http(s) host, and refuses a forged scheme or host with 400', async () => {
    const proxied = await buildTestApp({ env: { TRUST_PROXY: '127.0.0.1', UPLOAD_DIR: `/tmp/hardening-links-${process.pid}` } });
    const company = await makeCompany(proxied.database);
    const job = await makeJob(proxied.app, company.key);
    expect((await uploadPhotos(proxied.app, company.key, job.uuid, [{ bytes: PNG_BYTES, name: 'a.png' }])).status).toBe(200);
    const list = (headers: Record<string, string>) =>
      proxied.app.inject({
        method: 'GET',
        url: `/api/v1/jobs/${job.uuid}/photos`,
        remoteAddress: '127.0.0.1',
        headers: { authorization: `Bearer ${company.key}`, ...headers },
      });
    const good = await list({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'crm.example.com' });
    expect(good.statusCode).toBe(200);
    expect(good.json().data.photos[0].photo_url).toMatch(/^https:\/\/crm\.example\.com\/files\//);
    // A container's service name (underscores, a port), as a compose network gives it without a proxy.
    const service = await list({ 'x-forwarded-proto': 'http', 'x-forwarded-host': 'crm_api:3000' });
    expect(service.statusCode, service.body).toBe(200);
    expect(service.json().data.photos[0].photo_url).toMatch(/^http:\/\/crm_api:3000\/files\//);
    for (const headers of [
      { 'x-forwarded-proto': 'javascript', 'x-forwarded-host': 'crm.example.com' },
      { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example/"><script>' },
      { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'a@b' },
    ]) {
      const refused = await list(headers);
      expect(refused.statusCode, JSON.stringify(headers)).toBe(400);
      expect(refused.json().error.code).toBe('validation_error');
    }
    await proxied.close();
  });

  it('refuses a PUBLIC_BASE_URL that is not http or https', () => {
    expect(() => loadConfig({ PUBLIC_BASE_URL: 'javascript://evil.example/%0aalert(1)' })).toThrow(/PUBLIC_BASE_URL/);
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.example.com' }).PUBLIC_BASE_URL).toBe('https://api.example.com');
  });

  it('serves files with a sandboxing Content-Security-Policy and an inline Content-Disposition', async () => {
    const files = await buildTestApp({ env: { UPLOAD_DIR: `/tmp/hardening-files-${process.pid}`, PUBLIC_BASE_URL: 'https://api.example.test' } });
    const company = await makeCompany(files.database);
    const job = await makeJob(files.app, company.key);
    const uploaded = await uploadPhotos(files.app, company.key, job.uuid, [{ bytes: PNG_BYTES, name: 'a.png' }]);
    const link = new URL(uploaded.body.data.photos[0].photo_url);
    const file = await files.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.equals(PNG_BYTES)).toBe(true);
    expect(file.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(file.headers['content-disposition']).toBe(`inline; filename="${uploaded.body.data.photos[0].uuid}.png"`);
    expect(file.headers['x-content-type-options']).toBe('nosniff');
    await files.close();
  });
});

describe('logged URLs', () => {
  it('redacts signatures and tokens from every logged URL', async () => {
    expect(redactUrl('/files/a/b/c.png?expires=1700000000&signature=abcdef0123')).toBe('/files/a/b/c.png?expires=1700000000&signature=[redacted]');
    expect(redactUrl('/x?token=t0k&X-Amz-Signature=s1&X-Amz-Credential=c&page=2')).toBe('/x?token=[redacted]&X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&page=2');
    expect(redactUrl('/share/eyJhbGciOiJIUzI1NiJ9eyJzdWIiOiIxMjM0NTY3ODkwIn0abc/pdf')).toBe('/share/[redacted]/pdf');
    expect(redactUrl('/api/v1/customers/019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70?search=dana')).toBe('/api/v1/customers/019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70?search=dana');

    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const logged = await buildApp({ config: ctx.config, database: ctx.database, logger: { level: 'info', stream } });
    await logged.inject({ method: 'GET', url: '/files/x/y/z.png?expires=1&signature=deadbeefsecret' });
    await logged.close();
    const text = lines.join('');
    expect(text).toContain('signature=[redacted]');
    expect(text).not.toContain('deadbeefsecret');
  });
});

describe('idempotency keys', () => {
  it('are purged on a schedule once expired, by a job that stops when the app closes', async () => {
    const purging = await buildTestApp({ env: { IDEMPOTENCY_PURGE_INTERVAL_MS: '1000' } });
    const company = await makeCompany(purging.database);
    const old = new Date(Date.now() - 25 * 3600 * 1000);
    await purging.database.db.insert(idempotencyKeys).values([
      { companyId: company.companyId, key: 'expired', fingerprint: 'f', state: 'completed', responseStatus: 200, responseBody: '{}', createdAt: old },
      { companyId: company.companyId, key: 'fresh', fingerprint: 'f', state: 'completed', responseStatus: 200, responseBody: '{}' },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const keys = await purging.database.db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.companyId, company.companyId)));
    expect(keys.map((row) => row.key)).toEqual(['fresh']);
    await purging.close();
  });

  it('are purged batch by batch until none is expired, every company’s, the fresh ones kept', async () => {
    const [a, b] = [await makeCompany(ctx.database), await makeCompany(ctx.database)];
    const old = new Date(Date.now() - 25 * 3600 * 1000);
    const row = (companyId: string, key: string, createdAt?: Date) =>
      ({ companyId, key, fingerprint: 'f', state: 'completed' as const, responseStatus: 200, responseBody: '{}', ...(createdAt ? { createdAt } : {}) });
    await ctx.database.db.insert(idempotencyKeys).values([
      ...['e1', 'e2', 'e3'].map((key) => row(a.companyId, key, old)),
      ...['e4', 'e5'].map((key) => row(b.companyId, key, old)),
      row(a.companyId, 'fresh-a'),
      row(b.companyId, 'fresh-b'),
    ]);
    expect(await purgeExpiredKeys(ctx.database.db, Date.now(), 2)).toBeGreaterThanOrEqual(5);
    const left = await ctx.database.db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(inArray(idempotencyKeys.companyId, [a.companyId, b.companyId]));
    expect(left.map((kept) => kept.key).sort()).toEqual(['fresh-a', 'fresh-b']);
  });
});
