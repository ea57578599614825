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
