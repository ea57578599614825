import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, validCustomer } from './helpers/factories.js';

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

  it('refuses the same key with a different body (400)', async () => {
    const company = await makeCompany(ctx.database);
    const headers = { 'idempotency-key': 'retry-2' };
    const first = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer(), headers });
    expect(first.status).toBe(200);
    const other = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer(), headers });
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe('validation_error');
    expect(other.body.error.details[0].field).toBe('Idempotency-Key');
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
    const first = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body, headers });
    expect(first.status).toBe(400);
    expect(first.body.error.details[0].field).toBe('primary_service_location_uuid');
    const retry = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body, headers });
    expect(retry.status).toBe(400);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(await customerTotal(company.key)).toBe(0);
  });
});
