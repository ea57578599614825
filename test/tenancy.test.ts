import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeCustomer } from './helpers/factories.js';
import { PNG, seedAll } from './helpers/seed-all.js';

/**
 * The tenant-isolation matrix, generated from the route table: for every route that addresses a record,
 * another company gets 404 for every verb; lists and totals never show another company's records; ids
 * of another company in bodies and filters find nothing. A new route without a fixture fails here.
 */

const ctx = await buildTestApp();

const a = await makeCompany(ctx.database);
const b = await makeCompany(ctx.database);
const seedA = await seedAll(ctx.app, a.key);
await makeCustomer(ctx.app, b.key);

type Paths = Record<string, Record<string, unknown>>;
const paths = (ctx.app.swagger() as { paths: Paths }).paths;
const itemRoutes = Object.entries(paths).filter(([path]) => path.startsWith('/api/v1') && /\{[^}]+\}$/.test(path));
/** List endpoints: the GET routes that take a page parameter. */
const collectionRoutes = Object.entries(paths).filter(([path, methods]) => {
  const get = methods.get as { parameters?: Array<{ name: string }> } | undefined;
  return path.startsWith('/api/v1') && !/\}$/.test(path) && (get?.parameters ?? []).some((parameter) => parameter.name === 'page');
});

function fillForA(path: string): string {
  const collection = path.replace(/\/\{[^}]+\}$/, '');
  const id = seedA.byCollection[collection];
  if (!id) throw new Error(`No tenancy fixture for ${path}: add one to seedAll in test/helpers/seed-all.ts`);
  return path.replace('{job_uuid}', seedA.jobUuid).replace(/\{[^}]+\}$/, id);
}

describe('tenant isolation matrix', () => {
  it('covers every addressed route', () => {
    expect(itemRoutes.length).toBeGreaterThanOrEqual(8);
  });

  for (const [path, methods] of itemRoutes) {
    for (const method of Object.keys(methods)) {
      it(`${method.toUpperCase()} ${path}: another company gets 404`, async () => {
        const url = fillForA(path);
        const body = method === 'put' || method === 'patch' ? {} : undefined;
        const asB = await call(ctx.app, method.toUpperCase() as 'GET', url, { key: b.key, body });
        expect(asB.status, JSON.stringify(asB.body)).toBe(404);
        expect(asB.body.error.code).toBe('not_found');
        // Still there for its owner.
        const asA = await call(ctx.app, 'GET', url, { key: a.key });
        expect(asA.status).toBe(200);
      });
    }
  }

  it('photo upload to another company’s job is 404', async () => {
    const boundary = '----x';
    const response = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/jobs/${seedA.jobUuid}/photos`,
      headers: { authorization: `Bearer ${b.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="photos"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n${PNG.toString('binary')}\r\n--${boundary}--\r\n`,
    });
    expect(response.statusCode).toBe(404);
  });

  for (const [path] of collectionRoutes) {
    it(`GET ${path}: lists and totals never include another company’s records`, async () => {
      // A list under a record of A (a job's photos, an endpoint's deliveries) is 404 for B.
      const url = path
        .replace('{job_uuid}', seedA.jobUuid)
        .replace(/^(\/api\/v1\/[a-z_]+)\/\{uuid\}/, (_, collection: string) => `${collection}/${seedA.byCollection[collection]}`);
      const asB = await call(ctx.app, 'GET', `${url}?include_deleted=true&limit=100`, { key: b.key });
      if (path.includes('{')) {
        expect(asB.status).toBe(404);
        return;
      }
      expect(asB.status, JSON.stringify(asB.body)).toBe(200);
      const [plural] = Object.keys(asB.body.data).filter((key) => key !== 'pagination');
      const ids = (asB.body.data[plural] as Array<{ uuid?: string; id?: string }>).map((row) => row.uuid ?? row.id);
      for (const id of Object.values(seedA.byCollection)) expect(ids).not.toContain(id);
      expect(asB.body.data.pagination.total).toBe(ids.length);
    });
  }

  it('filters by another company’s ids find nothing', async () => {
    const checks = [
      `/api/v1/jobs?customer_uuid=${seedA.customerUuid}`,
      `/api/v1/jobs?location_uuid=${seedA.locationUuid}`,
      `/api/v1/estimates?customer_uuid=${seedA.customerUuid}`,
      `/api/v1/invoices?job_uuid=${seedA.jobUuid}`,
      `/api/v1/payments?invoice_uuid=${seedA.invoiceUuid}`,
      `/api/v1/customers?search=${seedA.customerUuid}`,
    ];
    for (const url of checks) {
      const response = await call(ctx.app, 'GET', url, { key: b.key });
      expect(response.status, url).toBe(200);
      expect(response.body.data.pagination.total, url).toBe(0);
    }
  });

  it('references to another company’s records in bodies are 400 and write nothing', async () => {
    const bCustomer = await makeCustomer(ctx.app, b.key);
    const attempts: Array<[string, Record<string, unknown>, string]> = [
      ['/api/v1/customers', { first_name: 'X', last_name: 'Y', primary_service_location_uuid: seedA.locationUuid }, 'primary_service_location_uuid'],
      ['/api/v1/jobs', { customer_uuid: seedA.customerUuid, title: 'Steal' }, 'customer_uuid'],
      ['/api/v1/jobs', { customer_uuid: bCustomer.uuid, title: 'Steal', location_uuid: seedA.locationUuid }, 'location_uuid'],
      ['/api/v1/estimates', { customer_uuid: bCustomer.uuid, template_uuid: seedA.templateUuid }, 'template_uuid'],
      ['/api/v1/invoices', { customer_uuid: bCustomer.uuid, job_uuid: seedA.jobUuid, due_date: '2030-01-01' }, 'job_uuid'],
      ['/api/v1/payments', { invoice_uuid: seedA.invoiceUuid, payment_type: 'cash', amount: 1, payment_date: '2026-11-20' }, 'invoice_uuid'],
    ];
    for (const [url, body, field] of attempts) {
      const response = await call(ctx.app, 'POST', url, { key: b.key, body });
      expect(response.status, `${url} ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(JSON.stringify(response.body.error), url).toContain(field);
    }
    const jobs = await call(ctx.app, 'GET', '/api/v1/jobs', { key: b.key });
    expect(jobs.body.data.pagination.total).toBe(0);
  });
});
