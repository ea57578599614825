import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { etagOf } from '../src/shared/etag.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeBillingSetup, makeInvoiceOf, makePayment } from './helpers/billing-factories.js';
import { makeEstimate, makeTemplate } from './helpers/estimates-factories.js';
import { storedEventCount } from './helpers/events.js';
import { makeCompany, makeCustomer, makeLocation } from './helpers/factories.js';
import { makeJob, PNG_BYTES, uploadPhotos } from './helpers/jobs-factories.js';

const ctx = await buildTestApp();
const { app } = ctx;

const STALE = '"0000000000000000000000000000000"';

async function current(key: string, path: string) {
  const response = await call(app, 'GET', `/api/v1${path}?include_deleted=true`, { key });
  expect(response.status).toBe(200);
  return response.body.data;
}

type Item = { path: string; body: Record<string, unknown> };

/** One item of every resource, with a body that changes it. */
async function itemsOf(key: string, database = ctx.database): Promise<Item[]> {
  void database;
  const customer = await makeCustomer(app, key);
  const template = await makeTemplate(app, key);
  const job = await makeJob(app, key, { customer_uuid: customer.uuid });
  const estimate = await makeEstimate(app, key, { customer_uuid: customer.uuid, template_uuid: template.uuid });
  const invoice = await makeInvoiceOf(app, { company: { key } as never, customer, jobUuid: job.uuid }, 300);
  const payment = await makePayment(app, key, invoice.uuid, 10);
  const location = await makeLocation(app, key);
  return [
    { path: `/locations/${location.uuid}`, body: { name: 'Changed' } },
    { path: `/customers/${customer.uuid}`, body: { notes: 'Changed' } },
    { path: `/templates/${template.uuid}`, body: { name: 'Changed' } },
    { path: `/estimates/${estimate.uuid}`, body: { customer_notes: 'Changed' } },
    { path: `/payments/${payment.uuid}`, body: { notes: 'Changed' } },
    { path: `/invoices/${invoice.uuid}`, body: { notes: 'Changed' } },
    { path: `/jobs/${job.uuid}`, body: { title: 'Changed' } },
  ];
}

describe('If-Match on PUT, PATCH and DELETE of every item path', () => {
  it('a tag that matches none is 412 precondition_failed and changes nothing', async () => {
    const company = await makeCompany(ctx.database);
    const items = await itemsOf(company.key);
    const stored = await storedEventCount(ctx.database, company.companyId);
    for (const { path, body } of items) {
      const before = await current(company.key, path);
      for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
        // An If-Match sent empty names no tag: it matches none, never making the write unconditional.
        for (const ifMatch of [STALE, `W/${etagOf(before)}`, `${STALE}, "other"`, '', ' ']) {
          const response = await call(app, method, `/api/v1${path}`, {
            key: company.key,
            body: method === 'DELETE' ? undefined : body,
            headers: { 'if-match': ifMatch },
          });
          expect(response.status, `${method} ${path} ${ifMatch}`).toBe(412);
          expect(response.body).toMatchObject({ success: false, error: { code: 'precondition_failed', message: expect.any(String) } });
        }
      }
      expect(await current(company.key, path)).toEqual(before);
    }
    // Nothing changed, so nothing was recorded.
    expect(await storedEventCount(ctx.database, company.companyId)).toBe(stored);
  });

  it('the current tag, a list holding it, or * lets the write through; a missing record stays 404', async () => {
    const company = await makeCompany(ctx.database);
    const items = await itemsOf(company.key);
    for (const { path, body } of items) {
      const tag = etagOf(await current(company.key, path));
      const put = await call(app, 'PUT', `/api/v1${path}`, { key: company.key, body, headers: { 'if-match': tag } });
      expect(put.status, `PUT ${path}`).toBe(200);
      expect(put.body.data).toEqual(await current(company.key, path));
      // The old tag is stale now.
      const stale = await call(app, 'PATCH', `/api/v1${path}`, { key: company.key, body, headers: { 'if-match': tag } });
      expect(stale.status, `PATCH ${path}`).toBe(412);
      const fresh = etagOf(await current(company.key, path));
      const patch = await call(app, 'PATCH', `/api/v1${path}`, { key: company.key, body, headers: { 'if-match': `${STALE}, ${fresh}` } });
      expect(patch.status, `PATCH ${path} list`).toBe(200);
      const star = await call(app, 'PATCH', `/api/v1${path}`, { key: company.key, body, headers: { 'if-match': '*' } });
      expect(star.status).toBe(200);
      const del = await call(app, 'DELETE', `/api/v1${path}`, {
        key: company.key,
        headers: { 'if-match': etagOf(await current(company.key, path)) },
      });
      expect(del.status, `DELETE ${path}`).toBe(200);
      const gone = await call(app, 'PATCH', `/api/v1${path}`, { key: company.key, body, headers: { 'if-match': '*' } });
      expect(gone.status).toBe(404);
    }
  });

  it('another company\'s record is 404 whatever the If-Match', async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const customer = await makeCustomer(app, a.key);
    const tag = etagOf(await current(a.key, `/customers/${customer.uuid}`));
    for (const ifMatch of [tag, STALE, '*']) {
      const response = await call(app, 'PATCH', `/api/v1/customers/${customer.uuid}`, { key: b.key, body: { notes: 'x' }, headers: { 'if-match': ifMatch } });
      expect(response.status).toBe(404);
    }
  });

  it('photo DELETE honours If-Match', async () => {
    const company = await makeCompany(ctx.database);
    const job = await makeJob(app, company.key);
    const upload = await uploadPhotos(app, company.key, job.uuid, [{ name: 'a.png', bytes: PNG_BYTES }]);
    const path = `/api/v1/jobs/${job.uuid}/photos/${upload.body.data.photos[0].uuid}`;
    const stale = await call(app, 'DELETE', path, { key: company.key, headers: { 'if-match': STALE } });
    expect(stale.status).toBe(412);
    expect((await call(app, 'GET', path, { key: company.key })).status).toBe(200);
    const star = await call(app, 'DELETE', path, { key: company.key, headers: { 'if-match': '*' } });
    expect(star.status).toBe(200);
    expect((await call(app, 'GET', path, { key: company.key })).status).toBe(404);
  });

  it('without If-Match writes stay unconditional', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await makeCustomer(app, company.key);
    expect((await call(app, 'PATCH', `/api/v1/customers/${customer.uuid}`, { key: company.key, body: { notes: 'a' } })).status).toBe(200);
    expect((await call(app, 'PATCH', `/api/v1/customers/${customer.uuid}`, { key: company.key, body: { notes: 'b' } })).status).toBe(200);
  });
});

describe.skipIf(!ctx.databaseUrl)('concurrent conditional writes (PostgreSQL)', () => {
  /**
   * The row is held locked by another connection while the writes arrive, so every one of them reads the
   * same before-state if it compared before taking the lock; compared under the lock, only the first passes.
   */
  it.each([
    ['PATCH', 'customers', { notes: 'x' }],
    ['PUT', 'jobs', { title: 'x' }],
    ['PATCH', 'templates', { name: 'x' }],
    ['DELETE', 'templates', undefined],
  ] as const)('%s /%s with the same If-Match: exactly one succeeds', async (method, resource, body) => {
    const company = await makeCompany(ctx.database);
    const record =
      resource === 'customers'
        ? await makeCustomer(app, company.key)
        : resource === 'jobs'
          ? await makeJob(app, company.key)
          : await makeTemplate(app, company.key);
    const path = `/${resource}/${record.uuid}`;
    const tag = etagOf(await current(company.key, path));
    const eventsBefore = await storedEventCount(ctx.database, company.companyId);
    const holder = new pg.Client({ connectionString: ctx.databaseUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(`select 1 from ${resource} where company_id = $1 and uuid = $2 for update`, [company.companyId, record.uuid]);
      const writes = Array.from({ length: 6 }, (_, i) =>
        call(app, method, `/api/v1${path}`, {
          key: company.key,
          body: body && Object.fromEntries(Object.entries(body).map(([field, value]) => [field, `${value}${i}`])),
          headers: { 'if-match': tag },
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      await holder.query('commit');
      const statuses = (await Promise.all(writes)).map((response) => response.status).sort();
      // After the winning delete the record is gone for the others (404); after an update their tag is stale (412).
      expect(statuses).toEqual(method === 'DELETE' ? [200, 404, 404, 404, 404, 404] : [200, 412, 412, 412, 412, 412]);
    } finally {
      await holder.end();
    }
    // One change, one event.
    expect(await storedEventCount(ctx.database, company.companyId)).toBe(eventsBefore + 1);
  });
});

describe.skipIf(!ctx.databaseUrl)('concurrent unconditional writes (PostgreSQL)', () => {
  it.each([
    ['customers', (i: number) => ({ notes: `writer ${i}` })],
    ['templates', (i: number) => ({ name: `writer ${i}` })],
  ] as const)('40 PATCHes of one record at once all succeed, last writer wins, one event each (/%s)', async (resource, bodyOf) => {
    const company = await makeCompany(ctx.database);
    const record = resource === 'customers' ? await makeCustomer(app, company.key) : await makeTemplate(app, company.key);
    const eventsBefore = await storedEventCount(ctx.database, company.companyId);
    const writes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => call(app, 'PATCH', `/api/v1/${resource}/${record.uuid}`, { key: company.key, body: bodyOf(i) })),
    );
    expect(writes.map((response) => response.status)).toEqual(Array(40).fill(200));
    const field = resource === 'customers' ? 'notes' : 'name';
    const final = await current(company.key, `/${resource}/${record.uuid}`);
    expect(writes.map((response) => response.body.data[field])).toContain(final[field]);
    expect(await storedEventCount(ctx.database, company.companyId)).toBe(eventsBefore + 40);
  });
});

describe('a conditional write on a record changed by a side effect', () => {
  it('an invoice tag taken before a payment is stale after it', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const invoice = await makeInvoiceOf(app, setup, 100);
    const tag = etagOf(await current(setup.company.key, `/invoices/${invoice.uuid}`));
    await makePayment(app, setup.company.key, invoice.uuid, 10);
    const response = await call(app, 'PATCH', `/api/v1/invoices/${invoice.uuid}`, {
      key: setup.company.key,
      body: { notes: 'x' },
      headers: { 'if-match': tag },
    });
    expect(response.status).toBe(412);
  });
});
