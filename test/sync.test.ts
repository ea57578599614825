import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { insertJob, makeInvoiceOf, makePayment, type BillingSetup } from './helpers/billing-factories.js';
import { makeEstimate, makeTemplate } from './helpers/estimates-factories.js';
import { makeCompany, makeCustomer, makeLocation, type TestCompany } from './helpers/factories.js';
import { makeJob, PNG_BYTES, uploadPhotos } from './helpers/jobs-factories.js';

const ctx = await buildTestApp();
const { app } = ctx;

interface ListCase {
  name: string;
  table: string;
  /** Makes a company with three or more rows in the list; answers the list path. */
  seed(company: TestCompany): Promise<string>;
}

async function billing(company: TestCompany): Promise<BillingSetup> {
  const customer = await makeCustomer(app, company.key);
  const jobUuid = await insertJob(ctx.database, company.companyId, customer.uuid);
  return { company, customer, jobUuid };
}

const LISTS: ListCase[] = [
  {
    name: 'locations',
    table: 'locations',
    seed: async ({ key }) => {
      for (let i = 0; i < 3; i++) await makeLocation(app, key);
      return '/locations';
    },
  },
  {
    name: 'customers',
    table: 'customers',
    seed: async ({ key }) => {
      for (let i = 0; i < 3; i++) await makeCustomer(app, key);
      return '/customers';
    },
  },
  {
    name: 'jobs',
    table: 'jobs',
    seed: async ({ key }) => {
      const customer = await makeCustomer(app, key);
      for (let i = 0; i < 3; i++) await makeJob(app, key, { customer_uuid: customer.uuid });
      return '/jobs';
    },
  },
  {
    name: 'templates',
    table: 'templates',
    seed: async ({ key }) => {
      for (let i = 0; i < 3; i++) await makeTemplate(app, key);
      return '/templates';
    },
  },
  {
    name: 'estimates',
    table: 'estimates',
    seed: async ({ key }) => {
      const customer = await makeCustomer(app, key);
      const template = await makeTemplate(app, key);
      for (let i = 0; i < 3; i++) await makeEstimate(app, key, { customer_uuid: customer.uuid, template_uuid: template.uuid });
      return '/estimates';
    },
  },
  {
    name: 'invoices',
    table: 'invoices',
    seed: async (company) => {
      const setup = await billing(company);
      for (let i = 0; i < 3; i++) await makeInvoiceOf(app, setup, 100);
      return '/invoices';
    },
  },
  {
    name: 'payments',
    table: 'payments',
    seed: async (company) => {
      const invoice = await makeInvoiceOf(app, await billing(company), 100);
      for (let i = 0; i < 3; i++) await makePayment(app, company.key, invoice.uuid, 1);
      return '/payments';
    },
  },
  {
    name: 'job photos',
    table: 'job_photos',
    seed: async ({ key }) => {
      const job = await makeJob(app, key);
      const upload = await uploadPhotos(app, key, job.uuid, [
        { name: 'a.png', bytes: PNG_BYTES },
        { name: 'b.png', bytes: PNG_BYTES },
        { name: 'c.png', bytes: PNG_BYTES },
      ]);
      expect(upload.status).toBe(200);
      return `/jobs/${job.uuid}/photos`;
    },
  },
];

type Row = { uuid: string; created_at: string; updated_at: string };

async function list(key: string, path: string, query: string): Promise<Row[]> {
  const response = await call(app, 'GET', `/api/v1${path}?${query}`, { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  const data = response.body.data;
  return Object.values(data).find(Array.isArray) as Row[];
}

function expectOrdered(rows: Row[], sort: string) {
  const field = sort.replace('-', '') as 'created_at' | 'updated_at';
  const sign = sort.startsWith('-') ? -1 : 1;
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [rows[i - 1], rows[i]];
    const order = a[field] === b[field] ? (a.uuid < b.uuid ? -1 : 1) : a[field] < b[field] ? -1 : 1;
    expect(order * sign, `${sort}: ${JSON.stringify([a, b])}`).toBe(-1);
  }
}

describe.each(LISTS)('sync parameters on the $name list', ({ table, seed }) => {
  it('sort orders by created_at or updated_at, ties by uuid in the same direction, across pages', async () => {
    const company = await makeCompany(ctx.database);
    const path = await seed(company);
    // Every row shares created_at; updated_at takes two values: ties everywhere.
    await ctx.database.db.execute(
      sql`update ${sql.identifier(table)} set created_at = '2026-03-01T00:00:00Z', updated_at = case when right(uuid::text, 1) < '8' then '2026-03-02T00:00:00Z'::timestamptz else '2026-03-03T00:00:00Z'::timestamptz end where company_id = ${company.companyId}`,
    );
    const all = await list(company.key, path, 'limit=100');
    expect(all.length).toBeGreaterThanOrEqual(3);
    expectOrdered(all, '-created_at');
    for (const sort of ['-created_at', 'created_at', '-updated_at', 'updated_at']) {
      const rows = await list(company.key, path, `sort=${sort}&limit=100`);
      expect(rows).toHaveLength(all.length);
      expectOrdered(rows, sort);
      // Pages of one put together give the same order.
      const paged = [...(await list(company.key, path, `sort=${sort}&limit=2&page=1`)), ...(await list(company.key, path, `sort=${sort}&limit=2&page=2`))];
      expect(paged.map((row) => row.uuid)).toEqual(rows.slice(0, 4).map((row) => row.uuid));
    }
  });

  it('updated_since keeps records updated at or after it; soft-deleted ones with include_deleted', async () => {
    const company = await makeCompany(ctx.database);
    const path = await seed(company);
    await ctx.database.db.execute(sql`update ${sql.identifier(table)} set updated_at = '2026-01-01T00:00:00Z' where company_id = ${company.companyId}`);
    const all = await list(company.key, path, 'limit=100');
    const [target] = all;
    await ctx.database.db.execute(
      sql`update ${sql.identifier(table)} set updated_at = '2026-02-01T10:00:00.250Z' where company_id = ${company.companyId} and uuid = ${target.uuid}`,
    );
    const since = await list(company.key, path, 'updated_since=2026-02-01T10:00:00.250Z');
    expect(since.map((row) => row.uuid)).toEqual([target.uuid]);
    const offset = await list(company.key, path, `updated_since=${encodeURIComponent('2026-02-01T12:00:00.250+02:00')}&sort=updated_at`);
    expect(offset.map((row) => row.uuid)).toEqual([target.uuid]);
    // The + of the offset sent unencoded: the query decodes it to a space, which reads as +.
    const unencoded = await list(company.key, path, 'updated_since=2026-02-01T12:00:00.250+02:00&sort=updated_at');
    expect(unencoded.map((row) => row.uuid)).toEqual([target.uuid]);
    expect(await list(company.key, path, 'updated_since=2026-02-01T12:00:00.251+02:00')).toEqual([]);
    expect(await list(company.key, path, 'updated_since=2026-02-01T10:00:00.251Z')).toEqual([]);
    const response = await call(app, 'GET', `/api/v1${path}?updated_since=2025-12-31T23:59:59Z&limit=2`, { key: company.key });
    expect(response.body.data.pagination).toMatchObject({ total: all.length, total_pages: Math.ceil(all.length / 2) });
    const filtered = await call(app, 'GET', `/api/v1${path}?updated_since=2026-02-01T00:00:00Z`, { key: company.key });
    expect(filtered.body.data.pagination.total).toBe(1);
  });

  it('rejects a bad updated_since or sort', async () => {
    const company = await makeCompany(ctx.database);
    const path = await seed(company);
    for (const [query, field] of [
      ['updated_since=2026-01-01T00:00:00', 'updated_since'],
      // A space elsewhere than before an offset is not read as anything.
      ['updated_since=2026-01-01 00:00:00Z', 'updated_since'],
      ['updated_since=2026-01-01T00:00:00 Z', 'updated_since'],
      ['updated_since=yesterday', 'updated_since'],
      ['updated_since=2026-02-30T00:00:00Z', 'updated_since'],
      ['updated_since=', 'updated_since'],
      ['sort=name', 'sort'],
      ['sort=-uuid', 'sort'],
      ['sort=', 'sort'],
    ]) {
      const response = await call(app, 'GET', `/api/v1${path}?${query}`, { key: company.key });
      expect(response.status, `${path}?${query}`).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(response.body.error.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
  });
});

describe('updated_at moves with every change, side effects and soft deletes included', () => {
  it('a payment moves its invoice and, when it pays it, the job; a soft delete shows in a sync page', async () => {
    const company = await makeCompany(ctx.database);
    const setup = await billing(company);
    const invoice = await makeInvoiceOf(app, setup, 100);
    const job = (await call(app, 'GET', `/api/v1/jobs/${setup.jobUuid}`, { key: company.key })).body.data;
    // The job was moved to Invoiced by the invoice.
    expect(job.status).toBe('Invoiced');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const mark = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const payment = await makePayment(app, company.key, invoice.uuid, 100);
    const invoices = await list(company.key, '/invoices', `updated_since=${mark}`);
    expect(invoices.map((row) => row.uuid)).toEqual([invoice.uuid]);
    const jobs = await list(company.key, '/jobs', `updated_since=${mark}`);
    expect(jobs.map((row) => row.uuid)).toEqual([setup.jobUuid]);
    expect((await list(company.key, '/customers', `updated_since=${mark}`)).length).toBe(0);

    const second = new Date(Date.now() + 5).toISOString();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await call(app, 'DELETE', `/api/v1/payments/${payment.uuid}`, { key: company.key })).status).toBe(200);
    expect(await list(company.key, '/payments', `updated_since=${second}`)).toEqual([]);
    const deleted = await list(company.key, '/payments', `updated_since=${second}&include_deleted=true`);
    expect(deleted.map((row) => row.uuid)).toEqual([payment.uuid]);
    // The deleted payment re-opened the invoice.
    expect((await list(company.key, '/invoices', `updated_since=${second}`)).map((row) => row.uuid)).toEqual([invoice.uuid]);
  });

  it('the location that stops being primary moves', async () => {
    const company = await makeCompany(ctx.database);
    const first = await makeLocation(app, company.key, { is_primary: true });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const mark = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await makeLocation(app, company.key, { is_primary: true });
    const moved = await list(company.key, '/locations', `updated_since=${mark}&sort=updated_at`);
    expect(moved.map((row) => row.uuid).sort()).toEqual([first.uuid, second.uuid].sort());
  });

  it('the users list keeps the paging parameters only', async () => {
    const company = await makeCompany(ctx.database);
    expect((await call(app, 'GET', '/api/v1/users?sort=created_at', { key: company.key })).status).toBe(400);
  });
});
