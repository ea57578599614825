import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { COUNTED_TABLES } from '../src/db/perf/record-counts.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeCustomer } from './helpers/factories.js';

const ctx = await buildTestApp();

describe('list totals from the maintained counts', () => {
  it('tracks creates and soft deletes exactly, per company', async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const created = [];
    for (let i = 0; i < 7; i++) created.push(await makeCustomer(ctx.app, a.key));
    await makeCustomer(ctx.app, b.key);
    for (const customer of created.slice(0, 2)) {
      const deleted = await call(ctx.app, 'DELETE', `/api/v1/customers/${customer.uuid}`, { key: a.key });
      expect(deleted.status).toBe(200);
    }
    // limit 2 so the total cannot be inferred from a short page.
    const live = await call(ctx.app, 'GET', '/api/v1/customers?limit=2', { key: a.key });
    expect(live.body.data.pagination).toEqual({ page: 1, limit: 2, total: 5, total_pages: 3 });
    const all = await call(ctx.app, 'GET', '/api/v1/customers?limit=2&include_deleted=true', { key: a.key });
    expect(all.body.data.pagination).toEqual({ page: 1, limit: 2, total: 7, total_pages: 4 });
    const other = await call(ctx.app, 'GET', '/api/v1/customers?limit=2', { key: b.key });
    expect(other.body.data.pagination.total).toBe(1);
  });

  it('stays exact under concurrent creates', async () => {
    const company = await makeCompany(ctx.database);
    await Promise.all(Array.from({ length: 30 }, () => makeCustomer(ctx.app, company.key)));
    const list = await call(ctx.app, 'GET', '/api/v1/customers?limit=1', { key: company.key });
    expect(list.body.data.pagination.total).toBe(30);
  });
});

describe('status-filtered totals from the maintained counts', () => {
  it('follow creates, status moves and soft deletes, one status or several', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, company.key);
    const create = async (status: string) => {
      const response = await call(ctx.app, 'POST', '/api/v1/jobs', {
        key: company.key,
        body: { customer_uuid: customer.uuid, title: `Job ${status}`, status },
      });
      expect(response.status).toBe(200);
      return response.body.data.uuid as string;
    };
    const scheduled = [await create('Scheduled'), await create('Scheduled'), await create('Scheduled')];
    await create('New');
    await create('Complete');
    const moved = await call(ctx.app, 'PATCH', `/api/v1/jobs/${scheduled[0]}`, { key: company.key, body: { status: 'In Progress' } });
    expect(moved.status).toBe(200);
    const deleted = await call(ctx.app, 'DELETE', `/api/v1/jobs/${scheduled[1]}`, { key: company.key });
    expect(deleted.status).toBe(200);

    const total = async (query: string) => {
      const response = await call(ctx.app, 'GET', `/api/v1/jobs?limit=1&${query}`, { key: company.key });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.data.pagination.total as number;
    };
    expect(await total('status=Scheduled')).toBe(1);
    expect(await total('status=Scheduled&include_deleted=true')).toBe(2);
    expect(await total('status=In%20Progress')).toBe(1);
    expect(await total('status=Scheduled,New,Complete')).toBe(3);
    expect(await total('status=Scheduled,Scheduled')).toBe(1);
    expect(await total('status=Invoiced')).toBe(0);
    // With another filter the total is counted from the rows and agrees.
    expect(await total(`status=Scheduled,New&customer_uuid=${customer.uuid}`)).toBe(2);
  });
});

describe('estimate and payment status totals', () => {
  it('count by status from the maintained counts, following transitions', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, company.key);
    const template = await call(ctx.app, 'POST', '/api/v1/templates', {
      key: company.key,
      body: { name: 'Tune-up', pricing_type: 'flat', base_price: 100 },
    });
    const estimates: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await call(ctx.app, 'POST', '/api/v1/estimates', {
        key: company.key,
        body: { customer_uuid: customer.uuid, template_uuid: template.body.data.uuid },
      });
      expect(created.status).toBe(200);
      estimates.push(created.body.data.uuid);
    }
    const accepted = await call(ctx.app, 'PUT', `/api/v1/estimates/${estimates[0]}`, { key: company.key, body: { status: 'Accepted' } });
    expect(accepted.status).toBe(200);
    const total = async (path: string) => {
      const response = await call(ctx.app, 'GET', `${path}&limit=1`, { key: company.key });
      expect(response.status).toBe(200);
      return response.body.data.pagination.total as number;
    };
    expect(await total('/api/v1/estimates?status=Pending')).toBe(2);
    expect(await total('/api/v1/estimates?status=Accepted')).toBe(1);
    expect(await total('/api/v1/estimates?status=Declined')).toBe(0);

    const job = await call(ctx.app, 'POST', '/api/v1/jobs', { key: company.key, body: { customer_uuid: customer.uuid, title: 'Paid job' } });
    const invoice = await call(ctx.app, 'POST', '/api/v1/invoices', {
      key: company.key,
      body: { job_uuid: job.body.data.uuid, customer_uuid: customer.uuid, due_date: '2030-01-01', line_items: [{ unit_price: 100 }] },
    });
    const pay = (status: string) =>
      call(ctx.app, 'POST', '/api/v1/payments', {
        key: company.key,
        body: { invoice_uuid: invoice.body.data.uuid, payment_type: 'cash', amount: 10, payment_date: '2026-11-20', status },
      });
    expect((await pay('Completed')).status).toBe(200);
    expect((await pay('Completed')).status).toBe(200);
    const pending = await pay('Pending');
    expect(pending.status).toBe(200);
    const failed = await call(ctx.app, 'PATCH', `/api/v1/payments/${pending.body.data.uuid}`, { key: company.key, body: { status: 'Failed' } });
    expect(failed.status).toBe(200);
    expect(await total('/api/v1/payments?status=Completed')).toBe(2);
    expect(await total('/api/v1/payments?status=Failed')).toBe(1);
    expect(await total('/api/v1/payments?status=Pending')).toBe(0);
  });
});

describe('the registry of counted tables', () => {
  it('matches the count triggers exactly: every entry has its trigger and bucket column, every trigger its entry', async () => {
    if (!ctx.databaseUrl) return; // PGlite: the same migrations; the catalog query is checked on PostgreSQL.
    const result = (await ctx.database.db.execute(sql`
      select c.relname as table_name, encode(t.tgargs, 'escape') as args
      from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_proc p on p.oid = t.tgfoid
      where p.proname = 'maintain_record_counts' and not t.tgisinternal`)) as unknown as { rows: Array<{ table_name: string; args: string }> };
    // tgargs holds each trigger argument followed by a NUL byte.
    const triggers = Object.fromEntries(result.rows.map((row) => [row.table_name, row.args.split('\\000').filter(Boolean)[0] ?? null]));
    expect(triggers).toEqual(COUNTED_TABLES);
  });

  it('counts a table without a trigger instead of reading an empty counter', async () => {
    const company = await makeCompany(ctx.database);
    for (const url of ['https://93.184.215.14/a', 'https://93.184.215.14/b', 'https://93.184.215.14/c']) {
      const created = await call(ctx.app, 'POST', '/api/v1/webhook_endpoints', { key: company.key, body: { url, events: ['*'], enabled: false } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
    }
    const list = await call(ctx.app, 'GET', '/api/v1/webhook_endpoints?limit=1', { key: company.key });
    expect(list.body.data.pagination.total).toBe(3);
  });
});
