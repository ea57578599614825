import { describe, expect, it } from 'vitest';
import { buildTestApp } from './helpers/app.js';

/**
 * The OpenAPI document in the shapes client generators turn into good types (scripts/generator-check.ts
 * compiles three generated clients against it in CI).
 */
const ctx = await buildTestApp();
type Json = Record<string, any>;
const document = ctx.app.swagger() as Json;
const schemas = document.components.schemas as Record<string, Json>;

const operations = Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ method, path, operation })),
);

function walk(node: unknown, visit: (object: Json) => void): void {
  if (Array.isArray(node)) node.forEach((item) => walk(item, visit));
  else if (node && typeof node === 'object') {
    visit(node as Json);
    Object.values(node).forEach((value) => walk(value, visit));
  }
}

const refName = (schema: Json | undefined) => (schema?.$ref as string | undefined)?.split('/').pop();

/** Component names a node refers to, transitively. */
function reachable(node: unknown): Set<string> {
  const found = new Set<string>();
  const pending = [node];
  while (pending.length > 0) {
    walk(pending.pop(), (object) => {
      const name = refName(object);
      if (name && !found.has(name)) {
        found.add(name);
        pending.push(schemas[name]);
      }
    });
  }
  return found;
}

describe('the OpenAPI document for generators', () => {
  it('names every success envelope: <Record>Response, <Record>ListResponse', () => {
    const names = new Set<string>();
    for (const { method, path, operation } of operations) {
      const schema = operation.responses['200']?.content?.['application/json']?.schema;
      if (!schema) continue;
      const name = refName(schema);
      expect(name, `${method} ${path}`).toMatch(/^[A-Z]\w+Response$/);
      names.add(name!);
    }
    expect([...names]).toEqual(expect.arrayContaining(['CustomerResponse', 'CustomerListResponse', 'JobListResponse', 'MessageResponse', 'ShareLinkResponse']));
    expect(schemas.CustomerResponse.properties.data).toEqual({ $ref: '#/components/schemas/Customer' });
    expect(schemas.CustomerListResponse.properties.data.properties.customers.items).toEqual({ $ref: '#/components/schemas/Customer' });
    // GET, create, PUT and PATCH of a customer answer the same envelope.
    const customer = operations.filter(({ path, method }) => (path === '/api/v1/customers/{uuid}' && method !== 'delete') || (path === '/api/v1/customers' && method === 'post'));
    expect(new Set(customer.map(({ operation }) => refName(operation.responses['200'].content['application/json'].schema)))).toEqual(new Set(['CustomerResponse']));
  });

  it('names request bodies without the Input suffix, each ending in Body', () => {
    const names = Object.keys(schemas);
    expect(names.filter((name) => name.endsWith('Input'))).toEqual([]);
    for (const { operation } of operations) {
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      // A body with no fields at all (share_link) has nothing to name.
      if (schema && Object.keys(schema.properties ?? {}).length > 0) expect(refName(schema)).toMatch(/Body$/);
    }
    expect(names).toEqual(expect.arrayContaining(['CreateCustomerBody', 'UpdateCustomerBody', 'InvoiceLineItemBody']));
  });

  it('names enums once and refers to them from requests and answers alike', () => {
    expect(schemas.JobStatus).toMatchObject({ type: 'string', enum: expect.arrayContaining(['New', 'Scheduled', 'Complete']) });
    expect(schemas.Job.properties.status).toEqual({ $ref: '#/components/schemas/JobStatus' });
    expect(refName(schemas.CreateJobBody.properties.status)).toBe('JobStatus');
    for (const name of ['JobPriority', 'InvoiceStatus', 'InvoiceType', 'EstimateStatus', 'PaymentStatus', 'PaymentType', 'PricingType', 'Tier', 'PhotoType', 'CustomerType', 'UsState', 'ListSort']) {
      expect(schemas[name]?.enum, name).toBeDefined();
    }
    // No component repeats the job status list inline.
    let inline = 0;
    walk(schemas, (object) => {
      if (Array.isArray(object.enum) && object.enum.includes('Ready to Invoice') && object !== schemas.JobStatus) inline++;
    });
    expect(inline).toBe(0);
  });

  it('writes nullable values as 3.1 type arrays, keeping anyOf only for a nullable reference', () => {
    expect(schemas.Customer.properties.email).toEqual({ type: ['string', 'null'] });
    walk(document, (object) => {
      if (!Array.isArray(object.anyOf)) return;
      const other = object.anyOf.filter((member: Json) => member.type !== 'null');
      if (object.anyOf.length === 2 && other.length === 1) expect(other[0].$ref, JSON.stringify(object)).toBeDefined();
    });
  });

  it('leaves response objects open and request bodies strict', () => {
    const requested = reachable(operations.map(({ operation }) => [operation.requestBody, operation.parameters]));
    const answered = reachable([operations.map(({ operation }) => operation.responses), document.components.responses]);
    for (const name of answered) {
      if (requested.has(name)) continue;
      walk(schemas[name], (object) => expect(object.additionalProperties, name).not.toBe(false));
    }
    expect(schemas.Customer.additionalProperties).toBeUndefined();
    expect(schemas.ErrorResponse.additionalProperties).toBeUndefined();
    expect(schemas.CreateCustomerBody.additionalProperties).toBe(false);
    expect(schemas.UpdateInvoiceBody.additionalProperties).toBe(false);
  });

  it('types the uploaded file as a binary string', () => {
    const upload = document.paths['/api/v1/jobs/{job_uuid}/photos'].post.requestBody.content['multipart/form-data'].schema;
    expect(upload.properties.photos.items).toEqual({ type: 'string', format: 'binary' });
  });

  it('documents 413 on every operation but a GET: any request may carry a body past the limit', () => {
    const without = operations.filter(({ method, operation }) => method !== 'get' && !operation.responses['413']);
    expect(without.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
    expect(operations.filter(({ method }) => method === 'delete').length).toBeGreaterThan(10);
  });

  it('states decimal places as x-decimal-places, never as a fractional multipleOf a float validator would misread', () => {
    const fractional: Json[] = [];
    walk(document, (object) => {
      if (typeof object.multipleOf === 'number' && object.multipleOf < 1) fractional.push(object);
    });
    expect(fractional).toEqual([]);
    const amount = schemas.CreatePaymentBody.properties.amount;
    expect(amount).toMatchObject({ 'x-decimal-places': 2, exclusiveMinimum: 0 });
    expect(amount.description).toMatch(/2 decimals/);
  });

  it('declares the headers a client may read: Idempotent-Replayed on POST answers, x-request-id up to 255 characters', () => {
    expect(document.paths['/api/v1/customers'].post.responses['200'].headers['Idempotent-Replayed']).toEqual({ $ref: '#/components/headers/IdempotentReplayed' });
    expect(document.components.headers.XRequestId.schema).toMatchObject({ minLength: 1, maxLength: 255 });
  });

  it('requires a visit create to give its time in one of the two forms', () => {
    expect(schemas.CreateVisitBody.oneOf).toEqual([
      { required: ['starts_at', 'ends_at'] },
      { required: ['local_date', 'local_start_time', 'local_end_time'] },
    ]);
  });

  it('documents include_deleted as a boolean, or 1 and 0 (DECISIONS §5)', () => {
    const parameter = document.paths['/api/v1/customers'].get.parameters.find((candidate: Json) => candidate.name === 'include_deleted');
    expect(parameter.schema).toMatchObject({ anyOf: [{ type: 'boolean' }, { type: 'integer', enum: [0, 1] }] });
    expect(parameter.description).toMatch(/1 and 0/);
  });

  it('offers an absolute server first, and the relative one', () => {
    expect(document.servers[0].url).toBe('http://localhost:3000');
    expect(document.servers.map((server: Json) => server.url)).toContain('/');
  });

  it('declares the share pages\' own HTML answers as HTML, as they are sent', async () => {
    for (const kind of ['estimates', 'invoices']) {
      const page = document.paths[`/share/${kind}/{token}`].get.responses;
      for (const status of ['200', '404', '429']) expect(Object.keys(page[status].content), `${kind} ${status}`).toEqual(['text/html']);
      const answered = await ctx.app.inject({ method: 'GET', url: `/share/${kind}/not-a-token` });
      expect(answered.statusCode).toBe(404);
      expect(answered.headers['content-type']).toContain('text/html');
      // The PDF answers its errors in the envelope.
      expect(Object.keys(document.paths[`/share/${kind}/{token}/pdf`].get.responses['404'].content)).toEqual(['application/json']);
    }
    // Accept and decline answer JSON to JSON and a page to a form.
    const accept = document.paths['/share/estimates/{token}/accept'].post.responses['404'];
    expect(Object.keys(accept.content).sort()).toEqual(['application/json', 'text/html']);
  });
});
