import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildTestApp } from '../helpers/app.js';
import { expectEnvelope } from '../helpers/conventions.js';
import { makeCompany, makeCustomer, makeLocation } from '../helpers/factories.js';
import { makeJob, PNG_BYTES } from '../helpers/jobs-factories.js';

/**
 * Hostile shapes against every documented operation: deep nesting, truncated and malformed multipart,
 * long URLs and headers, odd content types. Whatever arrives, the answer is a 4xx (or 200) in the error
 * envelope with an x-request-id, never a 5xx and never a request left hanging.
 */

const ctx = await buildTestApp({ env: { UPLOAD_TIMEOUT_MS: '3000' } });
const base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
const company = await makeCompany(ctx.database);
const location = await makeLocation(ctx.app, company.key);
const customer = await makeCustomer(ctx.app, company.key);
const job = await makeJob(ctx.app, company.key);
const ids = [location.uuid, customer.uuid, job.uuid, '019a0000-0000-7000-8000-000000000000'];

interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
}

const document = ctx.app.swagger() as { paths: Record<string, Record<string, unknown>> };
const operations: Operation[] = Object.entries(document.paths)
  .filter(([path]) => path.startsWith('/api/v1'))
  .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase() as Operation['method'], path })));
const withBody = operations.filter((operation) => ['POST', 'PUT', 'PATCH'].includes(operation.method));

function fill(path: string, values: string[]): string {
  let index = 0;
  return path.replace(/\{[^}]+\}/g, () => encodeURIComponent(values[index++ % values.length]));
}

function deepObject(depth: number, key = 'a'): string {
  return `${`{"${key}":`.repeat(depth)}1${'}'.repeat(depth)}`;
}
function deepArray(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

const FREE_FORM = ['internal_flags', 'business_hours', 'default_tax_rules', 'service_types_offered', 'payment_details', 'adjustments', 'tiers', 'line_items', 'invoice', 'estimate', 'first_name', 'name'];

const deepBody = fc.oneof(
  fc.integer({ min: 33, max: 20_000 }).map((depth) => deepObject(depth)),
  fc.integer({ min: 33, max: 20_000 }).map((depth) => deepArray(depth)),
  fc.tuple(fc.constantFrom(...FREE_FORM), fc.integer({ min: 33, max: 5_000 }), fc.boolean()).map(
    ([field, depth, array]) => `{"${field}":${array ? deepArray(depth) : deepObject(depth)}}`,
  ),
  fc.tuple(fc.constantFrom(...FREE_FORM), fc.integer({ min: 1, max: 32 })).map(([field, depth]) => `{"${field}":${deepObject(depth)}}`),
);

/** A multipart body in one of the ways a client gets it wrong. */
const brokenMultipart = fc
  .tuple(
    fc.constantFrom('truncated-small', 'truncated-large', 'no-boundary', 'wrong-boundary', 'bad-header', 'empty', 'garbage', 'unclosed-field', 'bare-lf'),
    fc.string({ minLength: 1, maxLength: 30 }).filter((value) => /^[A-Za-z0-9]+$/.test(value)),
  )
  .map(([kind, boundary]) => {
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="photos"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`;
    const closed = (bytes: Buffer) => Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    switch (kind) {
      case 'truncated-small':
        return { type: `multipart/form-data; boundary=${boundary}`, payload: Buffer.concat([Buffer.from(head), PNG_BYTES]) };
      case 'truncated-large':
        return { type: `multipart/form-data; boundary=${boundary}`, payload: Buffer.concat([Buffer.from(head), PNG_BYTES, Buffer.alloc(20_000, 1)]) };
      case 'no-boundary':
        return { type: 'multipart/form-data', payload: closed(PNG_BYTES) };
      case 'wrong-boundary':
        return { type: `multipart/form-data; boundary=not${boundary}`, payload: closed(PNG_BYTES) };
      case 'bad-header':
        return { type: `multipart/form-data; boundary=${boundary}`, payload: Buffer.from(`--${boundary}\r\nno colon here\r\n\r\nxx\r\n--${boundary}--\r\n`) };
      case 'empty':
        return { type: `multipart/form-data; boundary=${boundary}`, payload: Buffer.alloc(0) };
      case 'garbage':
        return { type: `multipart/form-data; boundary=${boundary}`, payload: Buffer.from('\u0000\u00ff garbage \r\n\r\n') };
      case 'unclosed-field':
        return { type: `multipart/form-data; boundary=${boundary}`, payload: Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="photo_type"\r\n\r\nbefo`) };
      default:
        return { type: `multipart/form-data; boundary=${boundary}`, payload: Buffer.from(closed(PNG_BYTES).toString('latin1').replace(/\r\n/g, '\n'), 'latin1') };
    }
  });

const oddContentType = fc.constantFrom(
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json, text/plain',
  'application/octet-stream',
  '*/*',
  'application/json; boundary=x',
  'multipart/mixed; boundary=x',
  'multipart/form-data; boundary=',
  'application/vnd.api+json',
  'APPLICATION/JSON',
  ';;;',
  'text/html; charset=utf-8',
);

/** The envelope, given as text, with its x-request-id. */
function expectEnvelopeText(status: number, headers: Record<string, unknown>, text: string, label: string) {
  expect(status, label).toBeLessThan(500);
  expect(headers['x-request-id'], label).toBeTruthy();
  let payload: any;
  try {
    payload = JSON.parse(text);
  } catch {
    payload = undefined;
  }
  expectEnvelope(status, payload, label);
}

async function send(operation: Operation, pathValues: string[], contentType: string | undefined, payload: string | Buffer | undefined) {
  const url = fill(operation.path, pathValues);
  const response = await ctx.app.inject({
    method: operation.method,
    url,
    headers: { authorization: `Bearer ${company.key}`, ...(contentType !== undefined ? { 'content-type': contentType } : {}) },
    payload,
  });
  return { response, label: `${operation.method} ${url} [${contentType}] -> ${response.body.slice(0, 300)}` };
}

describe('hostile shapes on every operation', () => {
  it('covers the operations with a body', () => {
    expect(withBody.length).toBeGreaterThan(10);
  });

  it('answers deeply nested JSON with 4xx or 200 in the envelope, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...withBody), fc.array(fc.constantFrom(...ids), { minLength: 1, maxLength: 2 }), deepBody, async (operation, values, body) => {
        const { response, label } = await send(operation, values, 'application/json', body);
        expectEnvelopeText(response.statusCode, response.headers, response.body, label);
      }),
      { numRuns: 300 },
    );
  }, 180_000);

  it('answers truncated and malformed multipart with 4xx in the envelope, within the deadline', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...withBody), fc.array(fc.constantFrom(...ids), { minLength: 1, maxLength: 2 }), brokenMultipart, async (operation, values, multipart) => {
        const started = Date.now();
        const { response, label } = await send(operation, values, multipart.type, multipart.payload);
        expectEnvelopeText(response.statusCode, response.headers, response.body, label);
        expect(response.statusCode, label).not.toBe(200);
        expect(Date.now() - started, label).toBeLessThan(2_500);
      }),
      { numRuns: 250 },
    );
  }, 180_000);

  it('answers every broken multipart shape on the upload operation itself with 400', async () => {
    const upload = withBody.find((operation) => operation.path.endsWith('/photos') && operation.method === 'POST')!;
    await fc.assert(
      fc.asyncProperty(brokenMultipart, async (multipart) => {
        const { response, label } = await send(upload, [job.uuid], multipart.type, multipart.payload);
        expect(response.statusCode, label).toBe(400);
        expectEnvelopeText(response.statusCode, response.headers, response.body, label);
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it('answers odd content types with 4xx or 200 in the envelope', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...withBody),
        fc.array(fc.constantFrom(...ids), { minLength: 1, maxLength: 2 }),
        oddContentType,
        fc.constantFrom('{"name":"x"}', 'a=1&b=2', '<x/>', '', '\u0000\u0001', '{"first_name":"A","last_name":"B"}'),
        async (operation, values, type, payload) => {
          const { response, label } = await send(operation, values, type, payload);
          expectEnvelopeText(response.statusCode, response.headers, response.body, label);
        },
      ),
      { numRuns: 300 },
    );
  }, 180_000);

  it('answers long URLs, long path parameters and long headers on every operation in the envelope', async () => {
    for (const operation of operations) {
      const path = fill(operation.path, ids);
      const cases: Array<{ url: string; headers?: Record<string, string> }> = [
        { url: `${path}?search=${'q'.repeat(17_000)}` },
        { url: fill(operation.path, ['x'.repeat(1_000)]) },
        { url: path, headers: { 'x-filler': 'h'.repeat(17_000) } },
        { url: path, headers: Object.fromEntries(Array.from({ length: 300 }, (_, index) => [`x-h${index}`, 'v'.repeat(60)])) },
      ];
      for (const { url, headers } of cases) {
        const response = await fetch(`${base}${url}`, {
          method: operation.method,
          headers: { authorization: `Bearer ${company.key}`, ...headers, ...(operation.method === 'GET' || operation.method === 'DELETE' ? {} : { 'content-type': 'application/json' }) },
          body: operation.method === 'GET' || operation.method === 'DELETE' ? undefined : '{}',
        });
        const text = await response.text();
        const label = `${operation.method} ${url.slice(0, 120)}… -> ${response.status} ${text.slice(0, 200)}`;
        expectEnvelopeText(response.status, Object.fromEntries(response.headers), text, label);
      }
    }
  }, 180_000);
});
