import { describe, expect, it } from 'vitest';
import { DETAIL_CODES, type DetailCode } from '../src/errors.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, validCustomer } from './helpers/factories.js';
import { seedAll } from './helpers/seed-all.js';

/**
 * Every detail code of DECISIONS.md §1 as a client meets it over HTTP: one request each, the exact item it
 * gets back, and the shape every error body has (request_id included).
 */
const ctx = await buildTestApp();
const { app } = ctx;
const company = await makeCompany(ctx.database);
const { key } = company;
const seed = await seedAll(app, key);
const UNKNOWN = '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70';

type Request = { method: 'GET' | 'POST' | 'PATCH'; url: string; body?: unknown };
type Expected = { field: string; message: string };

const BY_CODE = {
  required: [
    { method: 'POST', url: '/api/v1/customers', body: { first_name: 'Dana' } },
    { field: 'last_name', message: 'is required' },
  ],
  empty: [
    { method: 'POST', url: '/api/v1/customers', body: validCustomer({ first_name: '' }) },
    { field: 'first_name', message: 'must not be empty' },
  ],
  invalid_type: [
    { method: 'POST', url: '/api/v1/customers', body: validCustomer({ is_vip: 'yes' }) },
    { field: 'is_vip', message: 'must be true or false' },
  ],
  invalid_format: [
    { method: 'POST', url: '/api/v1/customers', body: validCustomer({ phone: '5125550142' }) },
    { field: 'phone', message: 'must be xxx-xxx-xxxx' },
  ],
  invalid_enum: [
    { method: 'POST', url: '/api/v1/customers', body: validCustomer({ customer_type: 'Industrial' }) },
    { field: 'customer_type', message: 'must be one of: Residential, Commercial' },
  ],
  out_of_range: [
    { method: 'POST', url: '/api/v1/customers', body: validCustomer({ last_name: 'x'.repeat(101) }) },
    { field: 'last_name', message: 'must be at most 100 characters' },
  ],
  unknown_field: [
    { method: 'POST', url: '/api/v1/customers', body: validCustomer({ nickname: 'D' }) },
    { field: 'nickname', message: 'is not an accepted field' },
  ],
  read_only: [
    { method: 'PATCH', url: `/api/v1/estimates/${seed.estimateUuid}`, body: { template_uuid: seed.templateUuid } },
    { field: 'template_uuid', message: 'cannot be changed after create' },
  ],
  invalid_reference: [
    { method: 'POST', url: '/api/v1/jobs', body: { title: 'Leak', customer_uuid: UNKNOWN } },
    { field: 'customer_uuid', message: 'does not refer to an existing record of this company' },
  ],
  invalid: [
    { method: 'POST', url: '/api/v1/invoices/preview', body: { progress_percentage: 50 } },
    { field: 'progress_percentage', message: 'is only accepted on a Progress invoice' },
  ],
} satisfies Record<DetailCode, [Request, Expected]>;

describe('each detail code over HTTP', () => {
  it('has a case for every code of the closed list', () => {
    expect(Object.keys(BY_CODE).sort()).toEqual([...DETAIL_CODES].sort());
  });

  for (const [code, [request, expected]] of Object.entries(BY_CODE) as Array<[DetailCode, [Request, Expected]]>) {
    it(`${code}: ${request.method} ${request.url.replace(/[0-9a-f-]{36}/g, '{uuid}')} names ${expected.field}`, async () => {
      const response = await call(app, request.method, request.url, { key, body: request.body });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body).toEqual({
        success: false,
        error: {
          code: 'validation_error',
          message: expect.stringContaining(`${expected.field} ${expected.message}`),
          request_id: response.headers['x-request-id'],
          details: [{ field: expected.field, code, message: expected.message }],
        },
      });
    });
  }
});

describe('the messages of DECISIONS.md §1', () => {
  it('a missing payment_type is required, never "Invalid option"', async () => {
    const response = await call(app, 'POST', '/api/v1/payments', {
      key,
      body: { invoice_uuid: seed.invoiceUuid, amount: 5, payment_date: '2026-11-20' },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ field: 'payment_type', code: 'required', message: 'is required' }]);
    expect(response.body.error.message).toBe('Invalid body: payment_type is required.');
  });

  it('a bad uuid in the path is one detail', async () => {
    for (const id of ['not-a-uuid', 'x'.repeat(150), `${UNKNOWN.slice(0, -1)}z`]) {
      const response = await call(app, 'GET', `/api/v1/customers/${id}`, { key });
      expect(response.status).toBe(400);
      expect(response.body.error.details).toEqual([{ field: 'uuid', code: 'invalid_format', message: 'must be a UUID' }]);
      expect(response.body.error.message).toBe('Invalid path: uuid must be a UUID.');
    }
  });

  it('one item per problem: no two items share a field and a code', async () => {
    const response = await call(app, 'POST', '/api/v1/locations', {
      key,
      body: { name: '', address1: 5, city: null, state: 'Texas', zip: '7870', timezone: 'Mars/Base', extra: 1, uuid: UNKNOWN },
    });
    expect(response.status).toBe(400);
    const pairs = response.body.error.details.map((detail: { field: string; code: string }) => `${detail.field} ${detail.code}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    expect(response.body.error.details).toEqual([
      { field: 'name', code: 'empty', message: 'must not be empty' },
      { field: 'address1', code: 'invalid_type', message: 'must be a string' },
      { field: 'city', code: 'invalid_type', message: 'must be a string, not null' },
      { field: 'state', code: 'invalid_enum', message: 'must be a 2-letter upper-case US state, DC or territory code' },
      { field: 'zip', code: 'invalid_format', message: 'must be 12345, 12345-6789 or 123456789' },
      { field: 'timezone', code: 'invalid_format', message: 'must be a valid IANA time zone' },
      { field: 'extra', code: 'unknown_field', message: 'is not an accepted field' },
      { field: 'uuid', code: 'read_only', message: 'is set by the server and cannot be sent' },
    ]);
  });

  it('a NUL character or a lone surrogate in any text of a body is 400 naming the field', async () => {
    const message = 'must be text without NUL characters (\\u0000) or lone surrogates (\\ud800-\\udfff)';
    const customer = await call(app, 'POST', '/api/v1/customers', { key, body: { first_name: 'a\u0000b', last_name: 'Ok' } });
    expect(customer.status).toBe(400);
    expect(customer.body.error.details).toEqual([{ field: 'first_name', code: 'invalid_format', message }]);
    const preview = await call(app, 'POST', '/api/v1/invoices/preview', {
      key,
      body: { line_items: [{ description: 'fine', unit_price: 1 }, { description: '\u0000', unit_price: 1 }] },
    });
    expect(preview.status).toBe(400);
    expect(preview.body.error.details).toEqual([{ field: 'line_items[1].description', code: 'invalid_format', message }]);
    const lone = await call(app, 'POST', '/api/v1/customers', { key, body: { first_name: 'x\ud800y', last_name: 'Ok\udc00' } });
    expect(lone.status).toBe(400);
    expect(lone.body.error.details).toEqual([
      { field: 'first_name', code: 'invalid_format', message },
      { field: 'last_name', code: 'invalid_format', message },
    ]);
    // A whole pair, escaped or not, is a character like any other.
    const emoji = await call(app, 'POST', '/api/v1/customers', { key, body: { first_name: '\ud83d\ude00', last_name: 'Ok' } });
    expect(emoji.status).toBe(200);
    expect(emoji.body.data.first_name).toBe('😀');
    const got = await call(app, 'GET', `/api/v1/customers/${emoji.body.data.uuid}`, { key });
    expect(got.headers.etag).toBe(emoji.headers.etag);
    // The escaped backslash followed by u0000 is ordinary text.
    const text = await call(app, 'POST', '/api/v1/customers', { key, body: { first_name: 'a\\u0000b', last_name: 'Ok' } });
    expect(text.status).toBe(200);
    expect(text.body.data.first_name).toBe('a\\u0000b');
  });

  it('a value of the wrong format that is also too long is one invalid_format, not out_of_range as well', async () => {
    const location = await call(app, 'POST', '/api/v1/locations', {
      key,
      body: { name: 'Long values', address1: '1 Main St', city: 'Austin', state: 'TX', zip: '12345-67890', phone: '+1-555-123-4567' },
    });
    expect(location.status).toBe(400);
    expect(location.body.error.details).toEqual([
      { field: 'zip', code: 'invalid_format', message: 'must be 12345, 12345-6789 or 123456789' },
      { field: 'phone', code: 'invalid_format', message: 'must be xxx-xxx-xxxx' },
    ]);
    const job = await call(app, 'POST', '/api/v1/jobs', {
      key,
      body: { customer_uuid: seed.customerUuid, title: 'Long values', scheduled_date: '2027-01-31T00:00:00Z', scheduled_time_start: '12:00:00' },
    });
    expect(job.status).toBe(400);
    expect(job.body.error.details).toEqual([
      { field: 'scheduled_date', code: 'invalid_format', message: 'must be a YYYY-MM-DD date' },
      { field: 'scheduled_time_start', code: 'invalid_format', message: 'must be HH:MM between 00:00 and 23:59' },
    ]);
    expect(job.body.error.message).toBe('Invalid body: scheduled_date must be a YYYY-MM-DD date; scheduled_time_start must be HH:MM between 00:00 and 23:59.');
  });

  it('an empty string is empty, whatever check sees it; a value of the wrong type is that one problem', async () => {
    const send = await call(app, 'POST', `/api/v1/estimates/${seed.estimateUuid}/send`, { key, body: { to: '' } });
    expect(send.body.error.details).toEqual([{ field: 'to', code: 'empty', message: 'must not be empty' }]);
    const endpoint = await call(app, 'POST', '/api/v1/webhook_endpoints', { key, body: { url: '', events: ['*'] } });
    expect(endpoint.body.error.details).toEqual([{ field: 'url', code: 'empty', message: 'must not be empty' }]);
    const query = await call(app, 'GET', '/api/v1/jobs?status=', { key });
    expect(query.body.error.details).toEqual([{ field: 'status', code: 'empty', message: 'must not be empty' }]);
    const cc = await call(app, 'POST', `/api/v1/estimates/${seed.estimateUuid}/send`, { key, body: { cc: 'a@example.com' } });
    expect(cc.body.error.details).toEqual([{ field: 'cc', code: 'invalid_type', message: expect.any(String) }]);
  });

  it('says nothing in a validator\'s own words, across many bad requests', async () => {
    const requests: Array<[Request['method'], string, unknown]> = [
      ['POST', '/api/v1/customers', { first_name: 1, last_name: [], email: 'x', phone: 1, customer_type: 1, internal_flags: 'x' }],
      ['POST', '/api/v1/jobs', { title: '', customer_uuid: 'x', status: 'Done', scheduled_date: '2026-13-01', scheduled_time: '25:00' }],
      ['POST', '/api/v1/invoices', { job_uuid: UNKNOWN, line_items: [{ unit_price: -1, quantity: 0, tax_rate: 101 }], discount_amount: 1.001 }],
      ['POST', '/api/v1/templates', { name: 'x', pricing_type: 'hourly', tiers: { good: 'a' }, addons: [{ id: '' }] }],
      ['GET', '/api/v1/jobs?status=New,Lost&limit=0&page=x&include_deleted=maybe&sort=name', undefined],
      ['PATCH', `/api/v1/invoices/${seed.invoiceUuid}`, { status: 'Void', due_date: 5, total_amount: 1 }],
    ];
    for (const [method, url, body] of requests) {
      const response = await call(app, method, url, { key, body });
      expect(response.status, url).toBe(400);
      for (const detail of response.body.error.details) {
        expect(DETAIL_CODES, JSON.stringify(detail)).toContain(detail.code);
        expect(detail.message, JSON.stringify(detail)).not.toMatch(/Invalid input|Invalid option|expected |received |Too (big|small)|Unrecognized/);
        expect(detail.message, JSON.stringify(detail)).toMatch(/^(is|must|has|cannot|does|matches|refers|would|was) /);
      }
    }
  });
});
