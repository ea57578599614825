import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { expectEnvelope } from './helpers/conventions.js';
import { makeCompany, makeCustomer, makeLocation } from './helpers/factories.js';

/**
 * Property-based fuzzing of every documented endpoint: whatever a client sends, the answer is never a
 * 5xx and is always the envelope.
 */

const ctx = await buildTestApp();
const company = await makeCompany(ctx.database);
const location = await makeLocation(ctx.app, company.key);
const customer = await makeCustomer(ctx.app, company.key);

interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  multipart: boolean;
}

const document = ctx.app.swagger() as { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> } }>> };
const operations: Operation[] = Object.entries(document.paths)
  .filter(([path]) => path.startsWith('/api/v1'))
  .flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, spec]) => ({
      method: method.toUpperCase() as Operation['method'],
      path,
      multipart: Boolean(spec.requestBody?.content?.['multipart/form-data']),
    })),
  );

const knownIds = [location.uuid, customer.uuid, '00000000-0000-0000-0000-000000000000', '019a0000-0000-7000-8000-000000000000'];
const pathValue = fc.oneof(
  fc.constantFrom(...knownIds),
  fc.uuid(),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('..%2F..%2Fetc%2Fpasswd', '%00', 'null', '-1', '1e999', 'ＡＢＣ'),
);

const scalar = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(1e308, -1e308, 0.1 + 0.2, 12.345, -0.01, 2 ** 53, '2026-02-30', '25:61', 'TX', 'tx', '12345-678'),
);
const jsonValue = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 10 }), scalar, { maxKeys: 4 }),
);
const knownFields = [
  'name', 'first_name', 'last_name', 'title', 'customer_uuid', 'job_uuid', 'template_uuid', 'invoice_uuid',
  'location_uuid', 'status', 'amount', 'quantity', 'unit_price', 'line_items', 'due_date', 'payment_type',
  'payment_date', 'state', 'zip', 'phone', 'email', 'is_primary', 'adjustments', 'selected_addons', 'tiers',
  'pricing_type', 'base_price', 'discount_amount', 'tax_amount', 'invoice', 'estimate', 'prefix', 'padding',
  'override_next_number', 'scheduled_date', 'scheduled_time_start', 'uuid', 'created_at',
];
const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...knownFields), jsonValue, { maxKeys: 8 }),
  fc.dictionary(fc.string({ maxLength: 12 }), jsonValue, { maxKeys: 5 }),
  jsonValue,
);
const rawBody = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.constantFrom('{', '{"a":', '[1,2', '\u0000', '{"first_name": "\ud800"}', 'null', '""'),
);
const query = fc.dictionary(
  fc.constantFrom('page', 'limit', 'include_deleted', 'search', 'status', 'filter', 'customer_uuid', 'photo_type', 'zzz'),
  fc.oneof(fc.string({ maxLength: 20 }), fc.integer().map(String), fc.constantFrom('-1', '0', '101', 'true', '1', '%', '_')),
  { maxKeys: 4 },
);

function fillPath(path: string, values: string[]): string {
  let index = 0;
  return path.replace(/\{[^}]+\}/g, () => encodeURIComponent(values[index++ % values.length]));
}

describe('fuzzing every endpoint', () => {
  it('covers the documented operations', () => {
    expect(operations.length).toBeGreaterThan(10);
  });

  it('never answers 5xx and always answers the envelope', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...operations),
        fc.array(pathValue, { minLength: 1, maxLength: 2 }),
        query,
        fc.oneof(body.map((value) => ({ json: value })), rawBody.map((raw) => ({ raw }))),
        async (operation, pathValues, queryValues, payload) => {
          const url = `${fillPath(operation.path, pathValues)}?${new URLSearchParams(queryValues)}`;
          const hasBody = operation.method !== 'GET' && operation.method !== 'DELETE';
          const response = await ctx.app.inject({
            method: operation.method,
            url,
            headers: {
              authorization: `Bearer ${company.key}`,
              ...(hasBody ? { 'content-type': operation.multipart ? 'multipart/form-data; boundary=x' : 'application/json' } : {}),
            },
            payload: hasBody ? ('json' in payload ? JSON.stringify(payload.json) : payload.raw) : undefined,
          });
          let parsed: unknown;
          try {
            parsed = response.json();
          } catch {
            parsed = undefined;
          }
          expectEnvelope(response.statusCode, parsed, `${operation.method} ${url} -> ${response.body.slice(0, 300)}`);
        },
      ),
      { numRuns: 1500 },
    );
  }, 120_000);

  it('reads back valid customer writes exactly as written', async () => {
    const name = fc.string({ minLength: 1, maxLength: 40 }).filter((value) => value.trim() === value && value.trim().length > 0);
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            first_name: name,
            last_name: name,
            company_name: fc.option(fc.string({ maxLength: 60 }), { nil: null }),
            phone: fc.option(fc.tuple(fc.integer({ min: 100, max: 999 }), fc.integer({ min: 100, max: 999 }), fc.integer({ min: 1000, max: 9999 })).map(([a, b, c]) => `${a}-${b}-${c}`), { nil: null }),
            is_vip: fc.boolean(),
            customer_type: fc.constantFrom('Residential', 'Commercial'),
            notes: fc.option(fc.string({ maxLength: 200 }), { nil: null }),
            internal_flags: fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.boolean(), fc.integer(), fc.string({ maxLength: 8 })), { maxKeys: 3 }), { nil: null }),
          },
          { requiredKeys: ['first_name', 'last_name'] },
        ),
        async (input) => {
          const created = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: input });
          expect(created.status, JSON.stringify(created.body)).toBe(200);
          const read = await call(ctx.app, 'GET', `/api/v1/customers/${created.body.data.uuid}`, { key: company.key });
          expect(read.status).toBe(200);
          expect(read.body.data).toEqual(created.body.data);
          for (const [field, value] of Object.entries(input)) expect(read.body.data[field]).toEqual(value);
        },
      ),
      { numRuns: 150 },
    );
  }, 120_000);
});
