import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Ajv2020, type AnySchemaObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp } from './helpers/app.js';
import { startMailSink } from './helpers/documents.js';
import { createVia, makeCompany, makeUser, validCustomer, validLocation } from './helpers/factories.js';
import { photoUploadPayload, seedAll } from './helpers/seed-all.js';
import { webhookDeliveries } from '../src/db/schema/index.js';

/**
 * Every documented operation is called with valid input (and some with invalid input), and every response
 * body is validated against the schema the OpenAPI document gives for that operation and status, with
 * Ajv's JSON Schema 2020-12 validator (the dialect of OpenAPI 3.1). A documented operation without a
 * successful sample call fails the last test, so a new route must be added here.
 */

// A local SMTP server, so the send operations have a successful sample too.
const mail = await startMailSink();
afterAll(() => mail.close());
const ctx = await buildTestApp({ env: { SMTP_URL: mail.url } });

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface ResponseObject {
  $ref?: string;
  content?: Record<string, { schema: AnySchemaObject }>;
}
interface OperationObject {
  responses: Record<string, ResponseObject>;
}
interface OpenApiDocument {
  paths: Record<string, Partial<Record<Lowercase<Method>, OperationObject>>>;
  components: { responses?: Record<string, ResponseObject> };
}

const document = ctx.app.swagger() as unknown as OpenApiDocument;

// ---- the validator: the whole document is one schema resource, response schemas point into it ----

const DOCUMENT_ID = 'https://field-service-crm.test/openapi.json';
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormatsPlugin.default(ajv);
// OpenAPI's own annotation keyword (JSON Schema 2020-12 has `examples`), and the document's top-level fields,
// which Ajv meets when it compiles the document root to resolve a ref into it.
ajv.addVocabulary(['example', 'openapi', 'info', 'servers', 'paths', 'components', 'tags', 'security', 'webhooks', 'externalDocs']);
/**
 * The document leaves response objects open, so clients accept fields the API adds later (DECISIONS.md §8).
 * Here they are closed: an object with properties and no additionalProperties of its own takes no others,
 * so the server is held to answering only what the document lists.
 */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (node === null || typeof node !== 'object') return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    copy[key] =
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as object).map(([name, schema]) => [name, closeObjects(schema)]))
        : closeObjects(value);
  }
  if ('properties' in copy && !('additionalProperties' in copy)) copy.additionalProperties = false;
  return copy;
}
ajv.addSchema(closeObjects(structuredClone(document)) as AnySchemaObject, DOCUMENT_ID);

/** Local refs (`#/components/schemas/X`) become refs into the registered document. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `${DOCUMENT_ID}${value}` : rebase(value),
    ]),
  );
}

const validators = new Map<string, ValidateFunction>();
function validatorFor(method: Method, path: string, status: number): ValidateFunction {
  const key = `${method} ${path} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    const operation = document.paths[path]?.[method.toLowerCase() as Lowercase<Method>];
    if (!operation) throw new Error(`${method} ${path} is not in the document`);
    const listed = operation.responses[String(status)];
    // Shared error responses are declared once under components.responses.
    const response = listed?.$ref ? document.components.responses?.[listed.$ref.split('/').pop()!] : listed;
    if (!response) throw new Error(`${method} ${path} answered ${status}, which the document does not list`);
    const schema = response.content?.['application/json']?.schema;
    if (!schema) throw new Error(`${method} ${path} ${status} has no application/json schema in the document`);
    validate = ajv.compile(rebase(schema) as AnySchemaObject);
    validators.set(key, validate);
  }
  return validate;
}

function expectConforms(method: Method, path: string, response: LightMyRequestResponse, contentType = 'application/json') {
  if (contentType !== 'application/json') {
    // PDFs and pages: the answer has the media type the document lists for that status.
    expect(response.headers['content-type'], `${method} ${path}`).toMatch(new RegExp(`^${contentType}`));
    const operation = document.paths[path]?.[method.toLowerCase() as Lowercase<Method>];
    expect(operation?.responses[String(response.statusCode)]?.content?.[contentType], `${method} ${path} ${contentType}`).toBeDefined();
    return;
  }
  expect(response.headers['content-type'], `${method} ${path}`).toMatch(/^application\/json/);
  const body: unknown = response.json();
  const validate = validatorFor(method, path, response.statusCode);
  const valid = validate(body);
  const problems = (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message} (${error.schemaPath})`);
  expect(problems, `${method} ${path} ${response.statusCode} does not match the document:\n${JSON.stringify(body, null, 2)}`).toEqual([]);
  expect(valid).toBe(true);
}

// ---- data: one record of every resource (seedAll), plus records with every optional field set ----

const company = await makeCompany(ctx.database);
const key = company.key;
const seed = await seedAll(ctx.app, key);
const techId = await makeUser(ctx.database, company.companyId);
const noAddons = await makeCompany(ctx.database, { addons: [] });

const primaryLocation = await createVia(ctx.app, key, '/locations', validLocation({ is_primary: true, phone: '512-555-0100' }));
const tiered = await createVia(ctx.app, key, '/templates', {
  name: 'AC tune-up',
  description: 'Seasonal inspection',
  pricing_type: 'tiered',
  tiers: { good: 100, better: 150, best: 200 },
  addons: [{ id: 'filter', name: 'Filter', price: 25 }],
  tax_rate: 8.25,
});
const richJob = await createVia(ctx.app, key, '/jobs', {
  customer_uuid: seed.customerUuid,
  location_uuid: primaryLocation.uuid,
  assigned_to_user_id: techId,
  title: 'Install a heat pump',
  status: 'Complete',
  estimated_amount: 1200,
  actual_amount: 1150.5,
  scheduled_date: '2026-12-01',
  scheduled_time_start: '09:00',
  scheduled_time_end: '11:30',
});
const richEstimate = await createVia(ctx.app, key, '/estimates', {
  customer_uuid: seed.customerUuid,
  template_uuid: tiered.uuid,
  job_uuid: richJob.uuid,
  location_uuid: primaryLocation.uuid,
  selected_tier: 'better',
  selected_addons: ['filter'],
  expires_at: '2030-01-01T00:00:00Z',
});

// A webhook endpoint that never sends (disabled), with one failed delivery in its log.
const hookEndpoint = await createVia(ctx.app, key, '/webhook_endpoints', { url: 'https://93.184.215.14/hooks', events: ['*'], enabled: false });
// A real event of the seeding (the feed's first), so the feed samples stay what the API records.
const hookEvent = (
  (await ctx.database.db.execute(sql`select uuid from events where company_id = ${company.companyId} order by seq limit 1`)) as unknown as {
    rows: Array<{ uuid: string }>;
  }
).rows[0];
const hookDeliveryUuid = randomUUID();
// An enabled endpoint subscribed to nothing the samples record, with one failed delivery a retry may schedule.
const liveHookEndpoint = await createVia(ctx.app, key, '/webhook_endpoints', { url: 'https://93.184.215.14/hooks', events: ['time_off.deleted'] });
const liveHookDeliveryUuid = randomUUID();
for (const [uuid, endpointUuid] of [
  [hookDeliveryUuid, hookEndpoint.uuid],
  [liveHookDeliveryUuid, liveHookEndpoint.uuid],
] as const) {
  await ctx.database.db.insert(webhookDeliveries).values({
    companyId: company.companyId,
    uuid,
    endpointUuid,
    eventUuid: hookEvent.uuid,
    eventType: 'customer.created',
    status: 'failed',
    attempts: 3,
    nextAttemptAt: null,
    lastResponseStatus: 500,
    lastError: 'The receiver answered HTTP 500.',
  });
}

const declinable = await createVia(ctx.app, key, '/estimates', {
  customer_uuid: seed.customerUuid,
  template_uuid: tiered.uuid,
  selected_tier: 'good',
});

/** An event the seeding recorded. */
const seededEvent = (
  (await ctx.database.db.execute(sql`select uuid from events where company_id = ${company.companyId} order by seq limit 1`)) as unknown as {
    rows: Array<{ uuid: string }>;
  }
).rows[0].uuid;

/** A test key (the company's sandbox) and a key that may only read invoices. */
const testKey = (await createVia(ctx.app, key, '/api_keys', { mode: 'test', scopes: ['*'] })).api_key as string;
const invoiceReader = (await createVia(ctx.app, key, '/api_keys', { scopes: ['invoices:read'] })).api_key as string;

/** Ids made by the sample calls themselves, for the calls after them. */
const made: Record<string, string> = {};
const missing = randomUUID();

// ---- the samples ----

interface Sample {
  method: Method;
  /** The documented path. */
  path: string;
  status: number;
  params?: () => Record<string, string>;
  query?: string;
  body?: unknown;
  multipart?: { payload: Buffer; contentType: string };
  /** Defaults to the company key; null sends none. */
  key?: string | null;
  /** Remembers the created record's uuid under this name. */
  save?: string;
  /** Remembers the token of the share link the answer carries under this name. */
  saveLink?: string;
  /** The media type of a non-JSON answer (PDFs, pages). */
  contentType?: string;
}

const uuid = (value: () => string) => () => ({ uuid: value() });
const photo = (photoUuid: () => string) => () => ({ job_uuid: seed.jobUuid, photo_uuid: photoUuid() });

const samples: Sample[] = [
  // Health and the company
  { method: 'GET', path: '/healthz', status: 200, key: null },
  { method: 'GET', path: '/readyz', status: 200, key: null },
  { method: 'GET', path: '/api/v1/companies/me', status: 200 },
  { method: 'GET', path: '/api/v1/companies/me', status: 401, key: null },
  { method: 'GET', path: '/api/v1/users', status: 200, query: 'page=1&limit=10' },
  { method: 'GET', path: '/api/v1/users', status: 400, query: 'limit=101' },

  // Locations
  { method: 'GET', path: '/api/v1/locations', status: 200, query: 'include_deleted=true&page=1&limit=100' },
  { method: 'GET', path: '/api/v1/locations/{uuid}', status: 200, params: uuid(() => primaryLocation.uuid) },
  { method: 'GET', path: '/api/v1/locations/{uuid}', status: 404, params: uuid(() => missing) },
  {
    method: 'POST',
    path: '/api/v1/locations',
    status: 200,
    body: validLocation({
      location_code: 'N-1',
      address2: 'Suite 4',
      phone: '512-555-0101',
      timezone: 'America/Chicago',
      business_hours: { mon: '08:00-17:00' },
      default_tax_rules: { rate: 8.25 },
      service_types_offered: { hvac: true },
      default_pricing_set_uuid: randomUUID(),
    }),
    save: 'location',
  },
  { method: 'POST', path: '/api/v1/locations', status: 400, body: { name: 'No address' } },
  { method: 'PUT', path: '/api/v1/locations/{uuid}', status: 200, params: uuid(() => made.location), body: { name: 'North shop', address2: null } },
  { method: 'PATCH', path: '/api/v1/locations/{uuid}', status: 200, params: uuid(() => made.location), body: { zip: '78701-1234' } },
  { method: 'DELETE', path: '/api/v1/locations/{uuid}', status: 400, params: uuid(() => primaryLocation.uuid) },
  { method: 'DELETE', path: '/api/v1/locations/{uuid}', status: 200, params: uuid(() => made.location) },
  { method: 'GET', path: '/api/v1/locations/{uuid}', status: 200, params: uuid(() => made.location), query: 'include_deleted=true' },

  // Customers
  { method: 'GET', path: '/api/v1/customers', status: 200, query: 'filter=all&search=Dana' },
  { method: 'GET', path: '/api/v1/customers', status: 401, key: 'fsc_live_not-a-real-key' },
  { method: 'GET', path: '/api/v1/customers/{uuid}', status: 200, params: uuid(() => seed.customerUuid) },
  {
    method: 'POST',
    path: '/api/v1/customers',
    status: 200,
    body: validCustomer({
      company_name: 'Reyes Plumbing',
      email: 'dana@example.com',
      phone: '512-555-0102',
      customer_type: 'Commercial',
      is_vip: true,
      physical_address1: '1 Main St',
      physical_city: 'Austin',
      physical_state: 'TX',
      physical_zip: '78701',
      billing_address1: 'PO Box 1',
      billing_city: 'Austin',
      billing_state: 'TX',
      billing_zip: '78702',
      primary_service_location_uuid: primaryLocation.uuid,
      notes: 'Gate code 1234',
      internal_flags: { slow_payer: false },
      on_my_way_notify_via: 'both',
    }),
    save: 'customer',
  },
  { method: 'POST', path: '/api/v1/customers', status: 400, body: {} },
  { method: 'POST', path: '/api/v1/customers', status: 413, body: validCustomer({ notes: 'x'.repeat(ctx.config.BODY_LIMIT_BYTES) }) },
  { method: 'PUT', path: '/api/v1/customers/{uuid}', status: 200, params: uuid(() => made.customer), body: { notes: null, is_vip: false } },
  { method: 'PATCH', path: '/api/v1/customers/{uuid}', status: 200, params: uuid(() => made.customer), body: { phone: '512-555-0103' } },
  { method: 'PATCH', path: '/api/v1/customers/{uuid}', status: 404, params: uuid(() => missing), body: { notes: 'x' } },
  { method: 'PUT', path: '/api/v1/customers/{uuid}', status: 413, params: uuid(() => made.customer), body: { notes: 'x'.repeat(ctx.config.BODY_LIMIT_BYTES) } },
  // A DELETE takes no body, but one past the limit is refused before the route runs, as documented.
  { method: 'DELETE', path: '/api/v1/customers/{uuid}', status: 413, params: uuid(() => made.customer), body: { notes: 'x'.repeat(ctx.config.BODY_LIMIT_BYTES) } },
  { method: 'DELETE', path: '/api/v1/customers/{uuid}', status: 200, params: uuid(() => made.customer) },
  { method: 'DELETE', path: '/api/v1/customers/{uuid}', status: 404, params: uuid(() => made.customer) },

  // Jobs
  { method: 'GET', path: '/api/v1/jobs', status: 200, query: 'status=New,Complete,Invoiced&priority=Normal' },
  { method: 'GET', path: '/api/v1/jobs', status: 400, query: 'status=Nope' },
  { method: 'GET', path: '/api/v1/jobs/{uuid}', status: 200, params: uuid(() => richJob.uuid) },
  { method: 'GET', path: '/api/v1/jobs/{uuid}', status: 200, params: uuid(() => seed.jobUuid) },
  {
    method: 'POST',
    path: '/api/v1/jobs',
    status: 200,
    body: {
      customer_uuid: seed.customerUuid,
      title: 'Annual service',
      job_number: 'J-77',
      description: 'Check everything',
      status: 'In Progress',
      priority: 'High',
      is_urgent: true,
      service_address1: '1 Main St',
      service_city: 'Austin',
      service_state: 'TX',
      service_zip: '78701',
      internal_notes: 'Dog in yard',
      customer_notes: 'Please call first',
    },
    save: 'job',
  },
  { method: 'POST', path: '/api/v1/jobs', status: 400, body: { customer_uuid: missing, title: 'Ghost' } },
  { method: 'PUT', path: '/api/v1/jobs/{uuid}', status: 200, params: uuid(() => made.job), body: { status: 'Complete', actual_amount: 99.99 } },
  { method: 'PATCH', path: '/api/v1/jobs/{uuid}', status: 200, params: uuid(() => made.job), body: { description: null } },
  { method: 'DELETE', path: '/api/v1/jobs/{uuid}', status: 200, params: uuid(() => made.job) },
  { method: 'GET', path: '/api/v1/jobs/{uuid}', status: 200, params: uuid(() => made.job), query: 'include_deleted=true' },

  // Job photos
  { method: 'GET', path: '/api/v1/jobs/{job_uuid}/photos', status: 200, params: () => ({ job_uuid: seed.jobUuid }) },
  { method: 'GET', path: '/api/v1/jobs/{job_uuid}/photos', status: 404, params: () => ({ job_uuid: missing }) },
  { method: 'GET', path: '/api/v1/jobs/{job_uuid}/photos/{photo_uuid}', status: 200, params: photo(() => seed.photoUuid) },
  {
    method: 'POST',
    path: '/api/v1/jobs/{job_uuid}/photos',
    status: 200,
    params: () => ({ job_uuid: seed.jobUuid }),
    multipart: photoUploadPayload({ photo_type: 'after', taken_at: '2026-11-20T10:00:00-05:00' }),
  },
  {
    method: 'POST',
    path: '/api/v1/jobs/{job_uuid}/photos',
    status: 400,
    params: () => ({ job_uuid: seed.jobUuid }),
    multipart: photoUploadPayload({ photo_type: 'sideways' }),
  },
  // The upload skips body validation (the body is the multipart stream), not the query or the path.
  {
    method: 'POST',
    path: '/api/v1/jobs/{job_uuid}/photos',
    status: 400,
    params: () => ({ job_uuid: seed.jobUuid }),
    query: 'unknown=1',
    multipart: photoUploadPayload(),
  },
  {
    method: 'POST',
    path: '/api/v1/jobs/{job_uuid}/photos',
    status: 400,
    params: () => ({ job_uuid: 'not-a-uuid' }),
    multipart: photoUploadPayload(),
  },
  { method: 'GET', path: '/api/v1/jobs/{job_uuid}/photos', status: 403, params: () => ({ job_uuid: seed.jobUuid }), key: noAddons.key },
  { method: 'DELETE', path: '/api/v1/jobs/{job_uuid}/photos/{photo_uuid}', status: 200, params: photo(() => seed.photoUuid) },
  { method: 'GET', path: '/api/v1/jobs/{job_uuid}/photos/{photo_uuid}', status: 200, params: photo(() => seed.photoUuid), query: 'include_deleted=true' },
  { method: 'DELETE', path: '/api/v1/jobs/{job_uuid}/photos/{photo_uuid}', status: 404, params: photo(() => seed.photoUuid) },

  // Templates
  { method: 'GET', path: '/api/v1/templates', status: 200, query: 'pricing_type=tiered&is_active=true' },
  { method: 'GET', path: '/api/v1/templates/{uuid}', status: 200, params: uuid(() => tiered.uuid) },
  {
    method: 'POST',
    path: '/api/v1/templates',
    status: 200,
    body: { name: 'Drain clean', pricing_type: 'flat', base_price: 89.5, addons: [{ id: 'camera', name: 'Camera', price: 40 }] },
    save: 'template',
  },
  { method: 'POST', path: '/api/v1/templates', status: 400, body: { name: 'No price', pricing_type: 'flat' } },
  { method: 'PUT', path: '/api/v1/templates/{uuid}', status: 200, params: uuid(() => made.template), body: { description: 'Main line', tax_rate: 6.25 } },
  { method: 'PATCH', path: '/api/v1/templates/{uuid}', status: 200, params: uuid(() => made.template), body: { is_active: false } },
  { method: 'DELETE', path: '/api/v1/templates/{uuid}', status: 200, params: uuid(() => made.template) },

  // Estimates
  {
    method: 'POST',
    path: '/api/v1/estimates/preview',
    status: 200,
    body: { template_uuid: tiered.uuid, selected_tier: 'best', quantity: 2, selected_addons: ['filter'], adjustments: { tax_amount: 10 } },
  },
  { method: 'POST', path: '/api/v1/estimates/preview', status: 400, body: { template_uuid: tiered.uuid } },
  { method: 'GET', path: '/api/v1/estimates', status: 200, query: 'status=Pending' },
  { method: 'GET', path: '/api/v1/estimates/{uuid}', status: 200, params: uuid(() => richEstimate.uuid) },
  { method: 'GET', path: '/api/v1/estimates/{uuid}', status: 200, params: uuid(() => seed.estimateUuid) },
  {
    method: 'POST',
    path: '/api/v1/estimates',
    status: 200,
    body: {
      customer_uuid: seed.customerUuid,
      template_uuid: tiered.uuid,
      selected_tier: 'good',
      quantity: 1.5,
      adjustments: { base_amount: 140 },
      service_description: 'Tune-up',
      internal_notes: 'Upsell filter',
      customer_notes: 'Valid 30 days',
    },
    save: 'estimate',
  },
  { method: 'PUT', path: '/api/v1/estimates/{uuid}', status: 200, params: uuid(() => made.estimate), body: { status: 'Accepted', response_notes: 'Go ahead' } },
  { method: 'PATCH', path: '/api/v1/estimates/{uuid}', status: 400, params: uuid(() => made.estimate), body: { status: 'Pending' } },
  { method: 'PATCH', path: '/api/v1/estimates/{uuid}', status: 200, params: uuid(() => made.estimate), body: { customer_notes: null } },
  { method: 'DELETE', path: '/api/v1/estimates/{uuid}', status: 200, params: uuid(() => made.estimate) },

  // Invoices
  {
    method: 'POST',
    path: '/api/v1/invoices/preview',
    status: 200,
    body: { line_items: [{ description: 'Part', quantity: 3, unit_price: 19.99, tax_rate: 8.25 }], discount_amount: 5 },
  },
  { method: 'POST', path: '/api/v1/invoices/preview', status: 200 },
  { method: 'POST', path: '/api/v1/invoices/preview', status: 400, body: { line_items: [{ quantity: 1 }] } },
  { method: 'GET', path: '/api/v1/invoices', status: 200, query: 'status=All' },
  { method: 'GET', path: '/api/v1/invoices/{uuid}', status: 200, params: uuid(() => seed.invoiceUuid) },
  {
    method: 'POST',
    path: '/api/v1/invoices',
    status: 200,
    body: {
      job_uuid: richJob.uuid,
      customer_uuid: seed.customerUuid,
      estimate_uuid: richEstimate.uuid,
      location_uuid: primaryLocation.uuid,
      invoice_type: 'Progress',
      progress_percentage: 50,
      issue_date: '2026-11-01',
      due_date: '2026-12-01',
      discount_amount: 10,
      notes: 'Thank you',
      terms: 'Net 30',
      internal_notes: 'First half',
    },
    save: 'invoice',
  },
  { method: 'GET', path: '/api/v1/invoices/{uuid}', status: 200, params: uuid(() => made.invoice) },
  { method: 'POST', path: '/api/v1/invoices', status: 400, body: { job_uuid: seed.jobUuid, customer_uuid: seed.customerUuid, due_date: '2026-02-30' } },
  { method: 'PUT', path: '/api/v1/invoices/{uuid}', status: 200, params: uuid(() => made.invoice), body: { notes: 'Updated' } },
  { method: 'PATCH', path: '/api/v1/invoices/{uuid}', status: 200, params: uuid(() => made.invoice), body: { terms: null } },
  { method: 'PATCH', path: '/api/v1/invoices/{uuid}', status: 400, params: uuid(() => made.invoice), body: { status: 'Paid' } },

  // Payments
  { method: 'GET', path: '/api/v1/payments', status: 200, query: `invoice_uuid=${seed.invoiceUuid}` },
  { method: 'GET', path: '/api/v1/payments/{uuid}', status: 200, params: uuid(() => seed.paymentUuid) },
  {
    method: 'POST',
    path: '/api/v1/payments',
    status: 200,
    body: {
      invoice_uuid: seed.invoiceUuid,
      payment_type: 'credit_card',
      payment_method: 'visa',
      amount: 50,
      processing_fee: 1.75,
      payment_date: '2026-11-21',
      transaction_id: 'txn_1',
      reference_number: 'R-1',
      authorization_code: 'A1',
      payment_details: { last4: '4242' },
      notes: 'Deposit',
      status: 'Pending',
    },
    save: 'payment',
  },
  { method: 'POST', path: '/api/v1/payments', status: 400, body: { invoice_uuid: seed.invoiceUuid, payment_type: 'cash', amount: 0, payment_date: '2026-11-21' } },
  { method: 'PUT', path: '/api/v1/payments/{uuid}', status: 200, params: uuid(() => made.payment), body: { status: 'Completed' } },
  { method: 'PATCH', path: '/api/v1/payments/{uuid}', status: 200, params: uuid(() => made.payment), body: { status: 'Refunded', notes: 'Refunded' } },
  { method: 'GET', path: '/api/v1/payments/{uuid}', status: 200, params: uuid(() => made.payment) },
  { method: 'DELETE', path: '/api/v1/payments/{uuid}', status: 200, params: uuid(() => made.payment) },
  { method: 'GET', path: '/api/v1/payments/{uuid}', status: 404, params: uuid(() => made.payment) },

  // Numbering
  { method: 'GET', path: '/api/v1/numbering', status: 200 },
  { method: 'GET', path: '/api/v1/numbering', status: 403, key: noAddons.key },
  { method: 'PUT', path: '/api/v1/numbering', status: 200, body: { invoice: { prefix: 'IN-', padding: 6 }, estimate: { override_next_number: 500 } } },
  { method: 'PUT', path: '/api/v1/numbering', status: 400, body: { invoice: { padding: 13 } } },
  { method: 'GET', path: '/api/v1/numbering', status: 200 },

  // Webhooks
  { method: 'GET', path: '/api/v1/webhook_endpoints', status: 200, query: 'include_deleted=true&page=1&limit=10' },
  { method: 'GET', path: '/api/v1/webhook_endpoints/{uuid}', status: 200, params: uuid(() => hookEndpoint.uuid) },
  { method: 'GET', path: '/api/v1/webhook_endpoints/{uuid}', status: 404, params: uuid(() => missing) },
  {
    method: 'POST',
    path: '/api/v1/webhook_endpoints',
    status: 200,
    body: { url: 'https://93.184.215.14/crm', description: 'Accounting', events: ['invoice.created'], enabled: false },
    save: 'webhook',
  },
  { method: 'POST', path: '/api/v1/webhook_endpoints', status: 400, body: { url: 'http://127.0.0.1/hooks', events: ['*'] } },
  { method: 'PUT', path: '/api/v1/webhook_endpoints/{uuid}', status: 200, params: uuid(() => made.webhook), body: { description: null } },
  { method: 'PATCH', path: '/api/v1/webhook_endpoints/{uuid}', status: 200, params: uuid(() => made.webhook), body: { events: ['*'] } },
  { method: 'DELETE', path: '/api/v1/webhook_endpoints/{uuid}', status: 200, params: uuid(() => made.webhook) },
  {
    method: 'GET',
    path: '/api/v1/webhook_endpoints/{uuid}/deliveries',
    status: 200,
    params: uuid(() => hookEndpoint.uuid),
    query: 'status=failed&page=1&limit=10',
  },
  { method: 'GET', path: '/api/v1/webhook_endpoints/{uuid}/deliveries', status: 404, params: uuid(() => missing) },
  {
    method: 'POST',
    path: '/api/v1/webhook_endpoints/{uuid}/deliveries/{delivery_uuid}/retry',
    status: 200,
    params: () => ({ uuid: liveHookEndpoint.uuid, delivery_uuid: liveHookDeliveryUuid }),
  },
  // The endpoint is disabled (it gets no attempts), so its retry is refused.
  {
    method: 'POST',
    path: '/api/v1/webhook_endpoints/{uuid}/deliveries/{delivery_uuid}/retry',
    status: 400,
    params: () => ({ uuid: hookEndpoint.uuid, delivery_uuid: hookDeliveryUuid }),
  },
  {
    method: 'POST',
    path: '/api/v1/webhook_endpoints/{uuid}/deliveries/{delivery_uuid}/retry',
    status: 404,
    params: () => ({ uuid: hookEndpoint.uuid, delivery_uuid: missing }),
  },
  // API keys, scopes and the sandbox
  { method: 'GET', path: '/api/v1/api_keys', status: 200, query: 'include_deleted=true&page=1&limit=10' },
  {
    method: 'POST',
    path: '/api/v1/api_keys',
    status: 200,
    body: { name: 'Books', scopes: ['invoices:read', 'payments:write'], allowed_ips: ['203.0.113.0/24'], expires_at: '2031-01-01T00:00:00Z' },
    save: 'apiKey',
  },
  { method: 'POST', path: '/api/v1/api_keys', status: 400, body: { scopes: [] } },
  { method: 'GET', path: '/api/v1/api_keys/{uuid}', status: 200, params: uuid(() => made.apiKey) },
  { method: 'GET', path: '/api/v1/api_keys/{uuid}', status: 404, params: uuid(() => missing) },
  { method: 'PATCH', path: '/api/v1/api_keys/{uuid}', status: 200, params: uuid(() => made.apiKey), body: { name: null, expires_at: null } },
  { method: 'PUT', path: '/api/v1/api_keys/{uuid}', status: 200, params: uuid(() => made.apiKey), body: { name: 'Renamed' } },
  { method: 'POST', path: '/api/v1/api_keys/{uuid}/roll', status: 200, params: uuid(() => made.apiKey), body: { grace_seconds: 3600 } },
  { method: 'DELETE', path: '/api/v1/api_keys/{uuid}', status: 200, params: uuid(() => made.apiKey) },
  { method: 'GET', path: '/api/v1/api_keys/{uuid}', status: 200, params: uuid(() => made.apiKey), query: 'include_deleted=true' },
  { method: 'GET', path: '/api/v1/customers', status: 403, key: invoiceReader },
  { method: 'DELETE', path: '/api/v1/sandbox', status: 200, key: testKey },
  { method: 'DELETE', path: '/api/v1/sandbox', status: 400 },

  // Documents: PDFs, share links, email and the customer pages
  { method: 'GET', path: '/api/v1/invoices/{uuid}/pdf', status: 200, params: uuid(() => seed.invoiceUuid), contentType: 'application/pdf' },
  { method: 'GET', path: '/api/v1/estimates/{uuid}/pdf', status: 200, params: uuid(() => richEstimate.uuid), contentType: 'application/pdf' },
  { method: 'GET', path: '/api/v1/estimates/{uuid}/pdf', status: 404, params: uuid(() => missing) },
  { method: 'POST', path: '/api/v1/invoices/{uuid}/share_link', status: 200, params: uuid(() => seed.invoiceUuid), saveLink: 'invoiceLink' },
  { method: 'POST', path: '/api/v1/estimates/{uuid}/share_link', status: 200, params: uuid(() => richEstimate.uuid), saveLink: 'estimateLink' },
  { method: 'POST', path: '/api/v1/estimates/{uuid}/share_link', status: 200, params: uuid(() => declinable.uuid), body: {}, saveLink: 'declineLink' },
  { method: 'POST', path: '/api/v1/estimates/{uuid}/send', status: 200, params: uuid(() => richEstimate.uuid), body: { to: 'dana@example.com', cc: ['office@example.com'], message: 'Thanks' } },
  { method: 'POST', path: '/api/v1/invoices/{uuid}/send', status: 200, params: uuid(() => seed.invoiceUuid), body: { to: 'dana@example.com' } },
  { method: 'POST', path: '/api/v1/invoices/{uuid}/send', status: 400, params: uuid(() => seed.invoiceUuid), body: { to: 'not-an-email' } },
  { method: 'GET', path: '/share/invoices/{token}', status: 200, params: () => ({ token: made.invoiceLink }), key: null, contentType: 'text/html' },
  { method: 'GET', path: '/share/invoices/{token}/pdf', status: 200, params: () => ({ token: made.invoiceLink }), key: null, contentType: 'application/pdf' },
  { method: 'GET', path: '/share/estimates/{token}', status: 200, params: () => ({ token: made.estimateLink }), key: null, contentType: 'text/html' },
  { method: 'GET', path: '/share/estimates/{token}/pdf', status: 200, params: () => ({ token: made.estimateLink }), key: null, contentType: 'application/pdf' },
  { method: 'GET', path: '/share/estimates/{token}/pdf', status: 404, params: () => ({ token: `${made.estimateLink}x` }), key: null },
  { method: 'POST', path: '/share/estimates/{token}/accept', status: 400, params: () => ({ token: made.estimateLink }), key: null, body: { selected_tier: 'best' } },
  {
    method: 'POST',
    path: '/share/estimates/{token}/accept',
    status: 200,
    params: () => ({ token: made.estimateLink }),
    key: null,
    body: { selected_tier: 'best', selected_addons: ['filter'], signature_name: 'Dana Reyes', response_notes: 'Yes, please' },
  },
  { method: 'POST', path: '/share/estimates/{token}/decline', status: 200, params: () => ({ token: made.declineLink }), key: null, body: { response_notes: 'Not now' } },
  { method: 'POST', path: '/share/estimates/{token}/decline', status: 400, params: () => ({ token: made.declineLink }), key: null, body: {} },

  // Scheduling: visits, time off, availability and calendar feeds
  { method: 'GET', path: '/api/v1/visits', status: 200, query: `assigned_user_id=${seed.userId}&from=2030-01-07T00:00:00Z&to=2030-01-14T00:00:00Z&sort=starts_at` },
  { method: 'GET', path: '/api/v1/visits', status: 400, query: 'sort=ends_at' },
  {
    method: 'POST',
    path: '/api/v1/visits',
    status: 200,
    body: {
      job_uuid: seed.jobUuid,
      title: 'Install',
      instructions: 'Gate code 4411',
      time_zone: 'America/Chicago',
      local_date: '2030-02-01',
      local_start_time: '08:00',
      local_end_time: '10:00',
      arrival_window_minutes: 60,
      assigned_user_ids: [techId],
      status: 'Dispatched',
    },
    save: 'visit',
  },
  { method: 'POST', path: '/api/v1/visits', status: 409, body: { job_uuid: seed.jobUuid, starts_at: '2030-02-01T15:00:00Z', ends_at: '2030-02-01T17:00:00Z', assigned_user_ids: [techId] } },
  { method: 'GET', path: '/api/v1/visits/{uuid}', status: 200, params: uuid(() => made.visit) },
  { method: 'PUT', path: '/api/v1/visits/{uuid}', status: 200, params: uuid(() => made.visit), body: { starts_at: '2030-02-01T14:30:00Z', ends_at: '2030-02-01T16:00:00Z', allow_overlap: false } },
  { method: 'PATCH', path: '/api/v1/visits/{uuid}', status: 200, params: uuid(() => made.visit), body: { status: 'En Route', title: null } },
  { method: 'PATCH', path: '/api/v1/visits/{uuid}', status: 400, params: uuid(() => made.visit), body: { status: 'Scheduled' } },
  { method: 'POST', path: '/api/v1/time_off', status: 200, body: { user_id: techId, starts_at: '2030-03-01T00:00:00Z', ends_at: '2030-03-08T00:00:00Z', reason: 'Vacation' }, save: 'timeOff' },
  { method: 'GET', path: '/api/v1/time_off', status: 200, query: `user_id=${techId}&sort=starts_at` },
  { method: 'GET', path: '/api/v1/time_off/{uuid}', status: 200, params: uuid(() => made.timeOff) },
  { method: 'PUT', path: '/api/v1/time_off/{uuid}', status: 200, params: uuid(() => made.timeOff), body: { reason: null } },
  { method: 'PATCH', path: '/api/v1/time_off/{uuid}', status: 200, params: uuid(() => made.timeOff), body: { ends_at: '2030-03-09T00:00:00Z' } },
  { method: 'GET', path: '/api/v1/availability', status: 200, query: `from=2030-02-01T00:00:00Z&to=2030-02-03T00:00:00Z&duration_minutes=60&user_ids=${techId},${seed.userId}&time_zone=America/Chicago` },
  { method: 'GET', path: '/api/v1/availability', status: 400, query: 'from=2030-02-01T00:00:00Z&to=2030-01-01T00:00:00Z&duration_minutes=60' },
  { method: 'POST', path: '/api/v1/users/{user_id}/calendar_link', status: 200, params: () => ({ user_id: techId }), saveLink: 'calendarLink' },
  { method: 'POST', path: '/api/v1/users/{user_id}/calendar_link', status: 404, params: () => ({ user_id: missing }) },
  { method: 'GET', path: '/calendar/{token}', status: 200, params: () => ({ token: made.calendarLink }), key: null, contentType: 'text/calendar' },
  { method: 'DELETE', path: '/api/v1/users/{user_id}/calendar_link', status: 200, params: () => ({ user_id: techId }) },
  { method: 'GET', path: '/calendar/{token}', status: 404, params: () => ({ token: made.calendarLink }), key: null },
  { method: 'DELETE', path: '/api/v1/time_off/{uuid}', status: 200, params: uuid(() => made.timeOff) },
  { method: 'DELETE', path: '/api/v1/visits/{uuid}', status: 200, params: uuid(() => made.visit) },
  { method: 'GET', path: '/api/v1/visits/{uuid}', status: 200, params: uuid(() => made.visit), query: 'include_deleted=true' },

  // Deletes of the seeded records, last; then each reads back with include_deleted=true.
  { method: 'DELETE', path: '/api/v1/invoices/{uuid}', status: 200, params: uuid(() => made.invoice) },
  { method: 'GET', path: '/api/v1/invoices/{uuid}', status: 200, params: uuid(() => made.invoice), query: 'include_deleted=true' },
  { method: 'DELETE', path: '/api/v1/estimates/{uuid}', status: 404, params: uuid(() => missing) },

  // Events, last: the feed then holds every kind of record, created, updated and deleted.
  { method: 'GET', path: '/api/v1/events', status: 200, query: 'limit=100' },
  { method: 'GET', path: '/api/v1/events', status: 200, query: `after=${seededEvent}&type=invoice.updated,payment.deleted` },
  { method: 'GET', path: '/api/v1/events', status: 400, query: 'type=invoice.paid' },
  { method: 'GET', path: '/api/v1/events/{uuid}', status: 200, params: uuid(() => seededEvent) },
  { method: 'GET', path: '/api/v1/events/{uuid}', status: 404, params: uuid(() => missing) },
];

function fill(path: string, params: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (!(name in params)) throw new Error(`no value for {${name}} in ${path}`);
    return params[name];
  });
}

async function send(sample: Sample) {
  const url = fill(sample.path, sample.params?.() ?? {}) + (sample.query ? `?${sample.query}` : '');
  const headers: Record<string, string> = {};
  const requestKey = sample.key === undefined ? key : sample.key;
  if (requestKey) headers.authorization = `Bearer ${requestKey}`;
  let payload: string | Buffer | undefined;
  if (sample.multipart) {
    headers['content-type'] = sample.multipart.contentType;
    payload = sample.multipart.payload;
  } else if (sample.body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(sample.body);
  }
  return ctx.app.inject({ method: sample.method, url, headers, payload });
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
  METHODS.filter((method) => operations[method]).map((method) => `${method.toUpperCase()} ${path}`),
);

describe('responses conform to the OpenAPI document', () => {
  for (const sample of samples) {
    it(`${sample.method} ${sample.path}${sample.query ? `?${sample.query}` : ''} -> ${sample.status}`, async () => {
      const response = await send(sample);
      expect(response.statusCode, response.body).toBe(sample.status);
      expectConforms(sample.method, sample.path, response, sample.contentType);
      if (sample.save) made[sample.save] = response.json().data.uuid;
      if (sample.saveLink) made[sample.saveLink] = new URL(response.json().data.url).pathname.split('/').at(-1)!;
    });
  }

  it('the validator rejects bodies that differ from the document', async () => {
    const response = await send({ method: 'GET', path: '/api/v1/customers/{uuid}', status: 200, params: uuid(() => seed.customerUuid) });
    const validate = validatorFor('GET', '/api/v1/customers/{uuid}', 200);
    const body = response.json();
    expect(validate(body)).toBe(true);
    expect(validate({ ...body, data: { ...body.data, first_name: 5 } })).toBe(false);
    expect(validate({ ...body, data: { ...body.data, extra: true } })).toBe(false);
    expect(validate({ ...body, data: { ...body.data, created_at: 'yesterday' } })).toBe(false);
    const { email: _email, ...withoutEmail } = body.data;
    expect(validate({ ...body, data: withoutEmail })).toBe(false);
  });

  it('every documented operation has a successful sample call', () => {
    const sampled = new Set(samples.filter((sample) => sample.status === 200).map((sample) => `${sample.method} ${sample.path}`));
    expect(documented.length).toBeGreaterThanOrEqual(50);
    expect(documented.filter((operation) => !sampled.has(operation))).toEqual([]);
  });

  it('every sample calls a documented operation', () => {
    const known = new Set(documented);
    expect(samples.map((sample) => `${sample.method} ${sample.path}`).filter((operation) => !known.has(operation))).toEqual([]);
  });

  it('covers 400, 401, 403, 404, 409 and 413 answers', () => {
    expect(new Set(samples.map((sample) => sample.status))).toEqual(new Set([200, 400, 401, 403, 404, 409, 413]));
  });
});
