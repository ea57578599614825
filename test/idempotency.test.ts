import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, validCustomer } from './helpers/factories.js';
import { createHash } from 'node:crypto';
import { BoundaryFreeHasher, canonicalJson } from '../src/plugins/idempotency.js';

const ctx = await buildTestApp();

async function customerTotal(key: string) {
  const list = await call(ctx.app, 'GET', '/api/v1/customers?include_deleted=true', { key });
  expect(list.status).toBe(200);
  return list.body.data.pagination.total as number;
}

describe('Idempotency-Key on POST', () => {
  it('returns the first response to a retry with the same key and body, creating one record', async () => {
    const company = await makeCompany(ctx.database);
    const body = validCustomer();
    const headers = { 'idempotency-key': 'retry-1' };
    const first = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body, headers });
    const second = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body, headers });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await customerTotal(company.key)).toBe(1);
  });

  it('takes the same fields in another order or spacing as the same request', async () => {
    const company = await makeCompany(ctx.database);
    const headers = { 'idempotency-key': 'retry-order', 'content-type': 'application/json' };
    const send = (payload: string) =>
      ctx.app.inject({ method: 'POST', url: '/api/v1/customers', headers: { ...headers, authorization: `Bearer ${company.key}` }, payload });
    const first = await send('{"first_name":"Ada","last_name":"Lovelace","physical_city":"Austin","physical_state":"TX"}');
    expect(first.statusCode, first.body).toBe(200);
    const again = await send('{ "physical_state": "TX", "last_name": "Lovelace",\n  "physical_city": "Austin", "first_name": "Ada" }');
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const other = await send('{"first_name":"Ada","last_name":"Byron"}');
    expect(other.statusCode).toBe(409);
    expect(await customerTotal(company.key)).toBe(1);
  });

  it('refuses the same key with a different body (409 conflict, naming the header)', async () => {
    const company = await makeCompany(ctx.database);
    const headers = { 'idempotency-key': 'retry-2' };
    const first = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer(), headers });
    expect(first.status).toBe(200);
    const other = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer(), headers });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('conflict');
    expect(other.body.error.details).toEqual([{ field: 'Idempotency-Key', code: 'invalid', message: 'was used with a different request' }]);
    expect(await customerTotal(company.key)).toBe(1);
  });

  it.skipIf(!ctx.databaseUrl)('creates exactly one record when the retries are concurrent', async () => {
    const company = await makeCompany(ctx.database);
    const body = validCustomer();
    const headers = { 'idempotency-key': 'concurrent-1' };
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body, headers })),
    );
    const succeeded = responses.filter((response) => response.status === 200);
    expect(succeeded.length).toBeGreaterThan(0);
    for (const response of responses) expect([200, 409]).toContain(response.status);
    expect(new Set(succeeded.map((response) => response.body.data.uuid)).size).toBe(1);
    expect(await customerTotal(company.key)).toBe(1);
  });

  it('scopes keys to the company', async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const body = validCustomer();
    const headers = { 'idempotency-key': 'shared-key' };
    const first = await call(ctx.app, 'POST', '/api/v1/customers', { key: a.key, body, headers });
    const second = await call(ctx.app, 'POST', '/api/v1/customers', { key: b.key, body, headers });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.data.uuid).not.toBe(first.body.data.uuid);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not keep refused requests, so a corrected retry with the same key runs', async () => {
    const company = await makeCompany(ctx.database);
    const headers = { 'idempotency-key': 'fix-and-retry' };
    const invalid = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: { first_name: 'A' }, headers });
    expect(invalid.status).toBe(400);
    const valid = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer(), headers });
    expect(valid.status).toBe(200);
    expect(await customerTotal(company.key)).toBe(1);
  });

  it('rejects a malformed key', async () => {
    const company = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/customers', {
      key: company.key,
      body: validCustomer(),
      headers: { 'idempotency-key': 'x'.repeat(300) },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    expect(await customerTotal(company.key)).toBe(0);
  });
});

describe('Idempotency-Key and refusals made by the service', () => {
  it('keeps a refusal made after the work started and replays it, while a new key runs anew', async () => {
    const company = await makeCompany(ctx.database);
    const missingLocation = '019a0000-0000-7000-8000-000000000000';
    const body = validCustomer({ primary_service_location_uuid: missingLocation });
    const headers = { 'idempotency-key': 'service-refusal' };
    const first = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body, headers: { ...headers, 'x-request-id': 'first-try' } });
    expect(first.status).toBe(400);
    expect(first.body.error.details[0].field).toBe('primary_service_location_uuid');
    expect(first.body.error.request_id).toBe('first-try');
    const retry = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body, headers: { ...headers, 'x-request-id': 'second-try' } });
    expect(retry.status).toBe(400);
    // The same refusal, naming the request it answers (its x-request-id).
    expect(retry.headers['x-request-id']).toBe('second-try');
    expect(retry.body).toEqual({ ...first.body, error: { ...first.body.error, request_id: 'second-try' } });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await customerTotal(company.key)).toBe(0);
  });
});

describe('the fingerprint of a request', () => {
  it('is one JSON text for one value, however its keys were ordered', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: null }, 2], e: { g: 'x', f: true } })).toBe('{"a":[{"c":null,"d":1},2],"b":1,"e":{"f":true,"g":"x"}}');
    expect(canonicalJson(undefined)).toBe('');
  });

  it('leaves out a multipart boundary however the chunks split it', () => {
    const boundary = '----form-boundary-0123456789';
    const body = (b: string) => Buffer.from(`--${b}\r\ncontent-disposition: form-data; name="x"\r\n\r\nvalue\r\n--${b}--\r\n`);
    const digest = (b: string, sizes: number[]) => {
      const hash = createHash('sha256');
      const hasher = new BoundaryFreeHasher(hash, b);
      const bytes = body(b);
      let at = 0;
      for (const size of sizes) {
        hasher.update(bytes.subarray(at, at + size));
        at += size;
      }
      hasher.update(bytes.subarray(at));
      hasher.end();
      return hash.digest('hex');
    };
    const whole = digest(boundary, []);
    for (let split = 1; split < 60; split += 3) expect(digest(boundary, [split, 7, 1])).toBe(whole);
    expect(digest('----another-boundary-98765', [5, 30])).toBe(whole);
    expect(digest(boundary, [])).not.toBe(createHash('sha256').update(body(boundary)).digest('hex'));
  });
});
