import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';

const ctx = await buildTestApp();

describe('query strictness on every route', () => {
  it('refuses unknown query parameters on routes that take none', async () => {
    const company = await makeCompany(ctx.database);
    const me = await call(ctx.app, 'GET', '/api/v1/companies/me?x=1', { key: company.key });
    expect(me.status).toBe(400);
    expect(me.body.error.code).toBe('validation_error');
    expect(me.body.error.details[0].field).toBe('x');
  });

  it('refuses unknown query parameters on writes', async () => {
    const company = await makeCompany(ctx.database);
    const created = await call(ctx.app, 'POST', '/api/v1/customers?dry_run=1', {
      key: company.key,
      body: { first_name: 'A', last_name: 'B' },
    });
    expect(created.status).toBe(400);
    expect(created.body.error.details[0].field).toBe('dry_run');
    const list = await call(ctx.app, 'GET', '/api/v1/customers', { key: company.key });
    expect(list.body.data.pagination.total).toBe(0);
  });
});

describe('a page past the end, however far (DECISIONS §5)', () => {
  const LISTS = [
    ['customers', 'customers'],
    ['locations', 'locations'],
    ['jobs', 'jobs'],
    ['estimates', 'estimates'],
    ['invoices', 'invoices'],
    ['payments', 'payments'],
    ['templates', 'templates'],
    ['visits', 'visits'],
    ['time_off', 'time_off'],
    ['webhook_endpoints', 'webhook_endpoints'],
  ] as const;

  it('is an empty page with the right total on every list; a page JavaScript cannot hold is 400', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: { first_name: 'A', last_name: 'B' } });
    expect(customer.status).toBe(200);
    for (const [path, key] of LISTS) {
      for (const page of [1_000_001, Number.MAX_SAFE_INTEGER]) {
        const response = await call(ctx.app, 'GET', `/api/v1/${path}?page=${page}&limit=100`, { key: company.key });
        expect(response.status, `${path} page ${page}`).toBe(200);
        expect(response.body.data[key], path).toEqual([]);
        const total = path === 'customers' ? 1 : response.body.data.pagination.total;
        expect(response.body.data.pagination).toEqual({ page, limit: 100, total, total_pages: Math.ceil(total / 100) });
      }
    }
    const beyond = await call(ctx.app, 'GET', '/api/v1/customers?page=9007199254740993', { key: company.key });
    expect(beyond.status).toBe(400);
    expect(beyond.body.error.details).toEqual([{ field: 'page', code: 'out_of_range', message: 'is too large' }]);
  });
});
