import { describe, expect, it } from 'vitest';
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
