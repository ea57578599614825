import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { createVia, makeCompany, makeCustomer } from './helpers/factories.js';
import { makeJob } from './helpers/jobs-factories.js';

/**
 * Every numeric bound the OpenAPI document states on a request (minimum, exclusiveMinimum, maximum,
 * x-decimal-places, integer) is enforced: a value just outside it is 400 validation_error naming the field, a value
 * just inside it is accepted. The bounds are read from the document, so a new bound is probed without a test
 * change; a bound on an operation this file cannot build a valid request for fails the coverage check.
 */
const ctx = await buildTestApp();
type Json = Record<string, any>;
const document = ctx.app.swagger() as Json;

function resolve(schema: Json): Json {
  let current = schema;
  while (current.$ref) current = document.components.schemas[(current.$ref as string).split('/').pop() as string];
  return current;
}

interface Bound {
  field: string[];
  schema: Json;
}

/** Numeric leaves of a request body schema, with their path ('[]' steps into an array's first item). */
function numericFields(schema: Json, path: string[] = [], found: Bound[] = []): Bound[] {
  const node = resolve(schema);
  for (const member of node.anyOf ?? []) if (member.type !== 'null') numericFields(member, path, found);
  for (const [name, property] of Object.entries((node.properties ?? {}) as Record<string, Json>)) numericFields(property, [...path, name], found);
  if (node.items) numericFields(node.items, [...path, '[]'], found);
  // A nullable number is a type array (`["number", "null"]`): its first member is its type.
  const type = Array.isArray(node.type) ? node.type[0] : node.type;
  if ((type === 'number' || type === 'integer') && path.length > 0) found.push({ field: path, schema: { ...node, type } });
  return found;
}

/**
 * [value, accepted] pairs just inside and just outside each bound of a schema. A string is a number's JSON text
 * as sent: more digits than a double holds must not pass as the nearest double (1.00000000000000000001 as 1).
 */
function probes(schema: Json): Array<[number | string, boolean, string]> {
  const places: number | undefined = schema['x-decimal-places'];
  const step: number = places !== undefined ? 10 ** -places : schema.type === 'integer' ? 1 : 0.01;
  const round = (value: number) => Number(value.toFixed(6));
  const cases: Array<[number | string, boolean, string]> = [
    ['1.00000000000000000000', true, 'one, written with many zeros'],
    ['1.00000000000000000001', false, 'more digits than a double holds'],
  ];
  if (schema.minimum === 0) cases.push(['1e-400', false, 'a decimal too small for a double, not zero']);
  if (schema.minimum !== undefined) cases.push([schema.minimum, true, 'minimum'], [round(schema.minimum - step), false, 'below minimum']);
  if (schema.exclusiveMinimum !== undefined) {
    cases.push([schema.exclusiveMinimum, false, 'at exclusiveMinimum'], [round(schema.exclusiveMinimum + step), true, 'above exclusiveMinimum']);
  }
  if (schema.maximum !== undefined) cases.push([schema.maximum, true, 'maximum'], [round(schema.maximum + step), false, 'above maximum']);
  if (places !== undefined) {
    cases.push([round(1 + step), true, 'decimal places'], [round(1 + step / 10), false, 'too many decimal places']);
  }
  if (schema.type === 'integer') cases.push([1.5, false, 'not an integer']);
  return cases;
}

/** Where a probe's JSON text goes in the body's text. */
const RAW_NUMBER = '\u0000raw number\u0000';

/** The body's JSON text with the field set to the probe: a number, or a number's JSON text as sent. */
function bodyWith(body: Json, field: string[], value: number | string): string {
  const text = JSON.stringify(setField(body, field, typeof value === 'number' ? value : RAW_NUMBER));
  return typeof value === 'number' ? text : text.replace(JSON.stringify(RAW_NUMBER), value);
}

function setField(body: Json, field: string[], value: unknown): Json {
  const copy = structuredClone(body);
  let node: any = copy;
  field.forEach((step, index) => {
    const last = index === field.length - 1;
    const key = step === '[]' ? 0 : step;
    if (last) node[key] = value;
    else node = node[key] ??= field[index + 1] === '[]' ? [{}] : {};
  });
  return copy;
}

// ---- valid requests to set each field in ----

const company = await makeCompany(ctx.database);
const numberingCompany = await makeCompany(ctx.database);
const key = company.key;
const MAX = 9999999999.99;
const customer = await makeCustomer(ctx.app, key);
const job = await makeJob(ctx.app, key, { customer_uuid: customer.uuid });
// Price 0 and tax 0: quantities and adjustments can reach their maxima without the total overflowing.
const flat = await createVia(ctx.app, key, '/templates', { name: 'Zero', pricing_type: 'flat', base_price: 0 });
const tiered = await createVia(ctx.app, key, '/templates', { name: 'Tiers', pricing_type: 'tiered', tiers: { good: 1, better: 2, best: 3 } });
// Template updates get templates of their own: the estimates above keep pricing from `flat` unchanged.
const flatToUpdate = await createVia(ctx.app, key, '/templates', { name: 'Flat', pricing_type: 'flat', base_price: 1 });
const estimate = await createVia(ctx.app, key, '/estimates', { customer_uuid: customer.uuid, template_uuid: flat.uuid });
const invoiceBase = { job_uuid: job.uuid, customer_uuid: customer.uuid, due_date: '2030-01-01' };

/** Amount fields interact (a discount needs a subtotal, a tax must not overflow the total): a base per field. */
function invoiceAmounts(field: string[]): Json {
  const name = field.join('.');
  if (name.startsWith('line_items')) return { line_items: [{ description: 'Part', quantity: 1, unit_price: 1 }] };
  if (name === 'discount_amount') return { subtotal: MAX };
  if (name === 'progress_percentage') return { invoice_type: 'Progress', subtotal: 100 };
  return { subtotal: 0 };
}

async function freshInvoice(total = MAX): Promise<string> {
  return (await createVia(ctx.app, key, '/invoices', { ...invoiceBase, subtotal: total })).uuid as string;
}

// A visit with nobody assigned: probes of its fields never clash with one another.
const visitTimes = { starts_at: '2030-01-01T14:00:00Z', ends_at: '2030-01-01T15:00:00Z' };
const visit = await createVia(ctx.app, key, '/visits', { job_uuid: job.uuid, ...visitTimes });

/** The other parameters a query needs besides the probed one. */
const QUERY_BASE: Record<string, string> = {
  '/api/v1/availability': 'from=2030-01-01T00:00:00Z&to=2030-01-02T00:00:00Z&',
};

type Prepare = (field: string[]) => Promise<{ url: string; body: Json; key?: string }>;
const item = (path: string, uuid: string) => path.replace(/\{[a-z_]+\}/, uuid);

const PREPARE: Record<string, Prepare> = {
  'POST /api/v1/jobs': async () => ({ url: '/api/v1/jobs', body: { title: 'Probe', customer_uuid: customer.uuid } }),
  'PUT /api/v1/jobs/{uuid}': async () => ({ url: `/api/v1/jobs/${job.uuid}`, body: {} }),
  'POST /api/v1/templates': async (field) => ({
    url: '/api/v1/templates',
    body:
      field[0] === 'tiers'
        ? { name: 'T', pricing_type: 'tiered', tiers: { good: 1, better: 2, best: 3 } }
        : { name: 'T', pricing_type: 'flat', base_price: 1, ...(field[0] === 'addons' ? { addons: [{ id: 'a', name: 'A', price: 1 }] } : {}) },
  }),
  'PUT /api/v1/templates/{uuid}': async (field) =>
    field[0] === 'tiers'
      ? { url: `/api/v1/templates/${tiered.uuid}`, body: { tiers: { good: 1, better: 2, best: 3 } } }
      : { url: `/api/v1/templates/${flatToUpdate.uuid}`, body: field[0] === 'addons' ? { addons: [{ id: 'a', name: 'A', price: 1 }] } : {} },
  'POST /api/v1/estimates/preview': async () => ({ url: '/api/v1/estimates/preview', body: { template_uuid: flat.uuid } }),
  'POST /api/v1/estimates': async () => ({ url: '/api/v1/estimates', body: { customer_uuid: customer.uuid, template_uuid: flat.uuid } }),
  'PUT /api/v1/estimates/{uuid}': async () => ({ url: `/api/v1/estimates/${estimate.uuid}`, body: {} }),
  'POST /api/v1/invoices/preview': async (field) => ({ url: '/api/v1/invoices/preview', body: { job_uuid: job.uuid, ...invoiceAmounts(field) } }),
  'POST /api/v1/invoices': async (field) => ({ url: '/api/v1/invoices', body: { ...invoiceBase, ...invoiceAmounts(field) } }),
  'PUT /api/v1/invoices/{uuid}': async (field) => ({ url: `/api/v1/invoices/${await freshInvoice(1)}`, body: invoiceAmounts(field) }),
  'POST /api/v1/payments': async () => ({
    url: '/api/v1/payments',
    // The invoice's total is the largest amount, so the amount and fee can reach their maxima.
    body: { invoice_uuid: await freshInvoice(), payment_type: 'cash', payment_date: '2026-11-22', amount: MAX },
  }),
  'PUT /api/v1/payments/{uuid}': async () => {
    const invoice = await freshInvoice();
    const payment = await createVia(ctx.app, key, '/payments', { invoice_uuid: invoice, payment_type: 'cash', payment_date: '2026-11-22', amount: 1 });
    return { url: `/api/v1/payments/${payment.uuid}`, body: { amount: MAX } };
  },
  'POST /api/v1/visits': async () => ({ url: '/api/v1/visits', body: { job_uuid: job.uuid, ...visitTimes } }),
  'PUT /api/v1/visits/{uuid}': async () => ({ url: `/api/v1/visits/${visit.uuid}`, body: {} }),
  'PUT /api/v1/numbering': async () => ({ url: '/api/v1/numbering', body: {}, key: numberingCompany.key }),
  'POST /api/v1/api_keys/{uuid}/roll': async () => {
    const made = await createVia(ctx.app, key, '/api_keys', { scopes: ['jobs:read'] });
    return { url: `/api/v1/api_keys/${made.uuid}/roll`, body: {} };
  },
};

function prepareFor(method: string, path: string): Prepare | undefined {
  // PATCH is the same partial update as PUT.
  return PREPARE[`${method} ${path}`] ?? PREPARE[`PUT ${path}`];
}

const operations = Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
);
const bodyBounds = operations.flatMap(({ path, method, operation }) => {
  const schema = operation.requestBody?.content?.['application/json']?.schema;
  return schema ? numericFields(schema).map((bound) => ({ path, method, ...bound })) : [];
});
const queryBounds = operations.flatMap(({ path, method, operation }) =>
  ((operation.parameters ?? []) as Json[])
    .filter((parameter) => parameter.in === 'query' && ['integer', 'number'].includes(parameter.schema?.type))
    .map((parameter) => ({ path, method, name: parameter.name as string, schema: parameter.schema as Json })),
);

describe('every documented numeric bound is enforced', { timeout: 300_000 }, () => {
  it('finds the bounds of money, quantities, percentages, numbering and pages in the document', () => {
    const names = new Set(bodyBounds.map((bound) => bound.field.at(-1)));
    for (const name of ['amount', 'unit_price', 'quantity', 'tax_rate', 'progress_percentage', 'padding', 'override_next_number', 'discount_amount']) {
      expect(names.has(name), name).toBe(true);
    }
    expect(queryBounds.some((bound) => bound.name === 'limit')).toBe(true);
    for (const bound of bodyBounds) {
      expect(bound.schema.maximum ?? bound.schema.exclusiveMaximum, `${bound.method} ${bound.path} ${bound.field.join('.')}`).toBeDefined();
      expect(bound.schema.minimum ?? bound.schema.exclusiveMinimum, `${bound.method} ${bound.path} ${bound.field.join('.')}`).toBeDefined();
    }
    // Every operation with a numeric body field can be probed.
    const unprobed = [...new Set(bodyBounds.map((bound) => `${bound.method} ${bound.path}`))].filter((op) => {
      const [method, path] = op.split(' ');
      return !prepareFor(method, path);
    });
    expect(unprobed).toEqual([]);
  });

  it('request bodies: just outside each bound is 400 naming the field, just inside is 200', async () => {
    const failures: string[] = [];
    for (const bound of bodyBounds) {
      const prepare = prepareFor(bound.method, bound.path) as Prepare;
      const fieldName = bound.field.join('.').replace(/\.\[\]/g, '[0]');
      for (const [value, accepted, what] of probes(bound.schema)) {
        const { url, body, key: callerKey } = await prepare(bound.field);
        const response = await call(ctx.app, bound.method as 'POST', item(url, ''), { key: callerKey ?? key, rawBody: bodyWith(body, bound.field, value) });
        const label = `${bound.method} ${bound.path} ${fieldName}=${value} (${what})`;
        if (accepted && response.status !== 200) failures.push(`${label}: expected 200, got ${response.status} ${JSON.stringify(response.body?.error)}`);
        if (!accepted) {
          const named = (response.body?.error?.details ?? []).some((detail: { field: string }) => detail.field.endsWith(fieldName));
          if (response.status !== 400 || response.body?.error?.code !== 'validation_error' || !named) {
            failures.push(`${label}: expected 400 naming ${fieldName}, got ${response.status} ${JSON.stringify(response.body?.error)}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('query parameters: just outside each bound is 400, just inside is 200', async () => {
    const failures: string[] = [];
    for (const bound of queryBounds) {
      if (bound.path.includes('{')) continue;
      // A query's integer is plain digits (list-query.ts): a JSON number's text is a body's concern.
      for (const [value, accepted, what] of probes(bound.schema).filter(([probe]) => typeof probe === 'number')) {
        const response = await call(ctx.app, bound.method as 'GET', `${bound.path}?${QUERY_BASE[bound.path] ?? ''}${bound.name}=${value}`, { key });
        const label = `${bound.method} ${bound.path}?${bound.name}=${value} (${what})`;
        if (accepted && response.status !== 200) failures.push(`${label}: expected 200, got ${response.status}`);
        if (!accepted && (response.status !== 400 || response.body?.error?.code !== 'validation_error')) {
          failures.push(`${label}: expected 400, got ${response.status}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('an invoice of many line items (SPEC: "any number of items"; DECISIONS §11 bounds one request at 10,000)', () => {
  it('prices 2,500 lines to the cent, in the preview and the create alike', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, company.key);
    const job = await makeJob(ctx.app, company.key, { customer_uuid: customer.uuid });
    // 2,500 lines of 0.333 x 1.01 (0.34 each after rounding) at 8.25 % (0.03 each): 850.00 + 75.00.
    const line_items = Array.from({ length: 2_500 }, () => ({ description: 'Part', quantity: 0.333, unit_price: 1.01, tax_rate: 8.25 }));
    const preview = await call(ctx.app, 'POST', '/api/v1/invoices/preview', { key: company.key, body: { line_items } });
    expect(preview.status).toBe(200);
    expect(preview.body.data.preview).toMatchObject({ subtotal: 850, tax_amount: 75, total_amount: 925 });
    expect(preview.body.data.breakdown.line_items).toHaveLength(2_500);
    const created = await call(ctx.app, 'POST', '/api/v1/invoices', {
      key: company.key,
      body: { job_uuid: job.uuid, customer_uuid: customer.uuid, due_date: '2099-12-31', line_items },
    });
    expect(created.status, JSON.stringify(created.body).slice(0, 600)).toBe(200);
    expect(created.body.data).toMatchObject({ subtotal: 850, tax_amount: 75, total_amount: 925, balance_amount: 925 });
    expect(created.body.data.line_items).toHaveLength(2_500);
    const tooMany = Array.from({ length: 10_001 }, () => ({ unit_price: 1 }));
    const refused = await call(ctx.app, 'POST', '/api/v1/invoices/preview', { key: company.key, body: { line_items: tooMany } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ field: 'line_items', code: 'out_of_range', message: 'must have at most 10000 items' }]);
    const most = await call(ctx.app, 'POST', '/api/v1/invoices/preview', { key: company.key, body: { line_items: tooMany.slice(1) } });
    expect(most.status).toBe(200);
    expect(most.body.data.preview.subtotal).toBe(10_000);
  });

  it('refuses a list page of more than 20,000 line items with 400 naming limit; a smaller page of the same invoices is served', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, company.key);
    const line_items = Array.from({ length: 9_000 }, () => ({ description: 'Part', quantity: 1, unit_price: 1 }));
    for (let i = 0; i < 3; i++) {
      const job = await makeJob(ctx.app, company.key, { customer_uuid: customer.uuid });
      const created = await call(ctx.app, 'POST', '/api/v1/invoices', {
        key: company.key,
        body: { job_uuid: job.uuid, customer_uuid: customer.uuid, due_date: '2099-12-31', line_items },
      });
      expect(created.status).toBe(200);
    }
    const heavy = await call(ctx.app, 'GET', '/api/v1/invoices?limit=3', { key: company.key });
    expect(heavy.status).toBe(400);
    expect(heavy.body.error.details).toEqual([{ field: 'limit', code: 'out_of_range', message: expect.stringMatching(/27000 line items, more than the 20000/) }]);
    const two = await call(ctx.app, 'GET', '/api/v1/invoices?limit=2', { key: company.key });
    expect(two.status).toBe(200);
    expect(two.body.data.invoices.map((invoice: { line_items: unknown[] }) => invoice.line_items.length)).toEqual([9_000, 9_000]);
    expect(two.body.data.pagination).toMatchObject({ total: 3, total_pages: 2 });
    const last = await call(ctx.app, 'GET', '/api/v1/invoices?limit=2&page=2', { key: company.key });
    expect(last.body.data.invoices).toHaveLength(1);
  });
});
