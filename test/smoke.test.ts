import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeCustomer, makeLocation } from './helpers/factories.js';

const ctx = await buildTestApp();

describe('smoke', () => {
  it('serves the company and creates records', async () => {
    const company = await makeCompany(ctx.database);
    const me = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key });
    expect(me.status).toBe(200);
    expect(me.body.data.uuid).toBe(company.companyId);
    const location = await makeLocation(ctx.app, company.key, { is_primary: true });
    expect(location.is_primary).toBe(true);
    const customer = await makeCustomer(ctx.app, company.key, { primary_service_location_uuid: location.uuid });
    expect(customer.primary_service_location_uuid).toBe(location.uuid);
    const list = await call(ctx.app, 'GET', '/api/v1/customers?search=reyes', { key: company.key });
    expect(list.status).toBe(200);
    expect(list.body.data.pagination.total).toBe(1);
    const bad = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body: { first_name: 'a', foo: 1 } });
    expect(bad.status).toBe(400);
    console.log(JSON.stringify(bad.body), JSON.stringify(me.headers));
  });
});
