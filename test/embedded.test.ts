import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/client.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { createCompany } from '../src/modules/admin/provisioning.service.js';
import { call } from './helpers/app.js';
import { waitForFeed } from './helpers/events.js';

// The embedded mode: no DATABASE_URL, PGlite in memory, the same migrations and the same app.
const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: 'memory://', RATE_LIMIT_PER_MINUTE: '0' });
const database = await createDatabase(config);
await migrateDatabase(database);
const app = await buildApp({ config, database });
await app.ready();
afterAll(async () => {
  await app.close();
  await database.close();
});

describe('embedded PGlite database', () => {
  it('uses PGlite when DATABASE_URL is absent', () => {
    expect(config.DATABASE_URL).toBeUndefined();
    expect(database.driver).toBe('pglite');
  });

  it('is ready and serves a provisioned company', async () => {
    const ready = await call(app, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.success).toBe(true);

    const created = await createCompany(database.db, { name: 'Embedded Co', email: 'embedded@example.com' });
    const me = await call(app, 'GET', '/api/v1/companies/me', { key: created.api_key });
    expect(me.status).toBe(200);
    expect(me.body).toStrictEqual({
      success: true,
      data: {
        uuid: created.company_uuid,
        name: 'Embedded Co',
        email: 'embedded@example.com',
        phone: null,
        address_line_1: null,
        address_line_2: null,
        city: null,
        state: null,
        postal_code: null,
        country: null,
      },
    });
    expect(me.headers['x-usage-count']).toBe('1');
    const unknown = await call(app, 'GET', '/api/v1/companies/me', { key: `fsc_live_${'B'.repeat(43)}` });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe('unauthorized');
  });

  it('creates locations with the single-primary rule and searches customers (pg_trgm index) case-insensitively', async () => {
    const { api_key: key } = await createCompany(database.db, { name: 'Search Co', email: 'search@example.com' });
    const base = { address1: '1 Main St', city: 'Austin', state: 'TX', zip: '78701' };
    const first = await call(app, 'POST', '/api/v1/locations', { key, body: { ...base, name: 'One', is_primary: true } });
    const second = await call(app, 'POST', '/api/v1/locations', { key, body: { ...base, name: 'Two', is_primary: true } });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    const one = await call(app, 'GET', `/api/v1/locations/${first.body.data.uuid}`, { key });
    expect(one.body.data.is_primary).toBe(false);
    const refused = await call(app, 'DELETE', `/api/v1/locations/${second.body.data.uuid}`, { key });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('primary_location');
    const deleted = await call(app, 'DELETE', `/api/v1/locations/${first.body.data.uuid}`, { key });
    expect(deleted.status).toBe(200);

    const dana = await call(app, 'POST', '/api/v1/customers', {
      key,
      body: { first_name: 'Dana', last_name: 'Reyes', company_name: '100% Pure_Water', email: 'dana@reyes.example' },
    });
    expect(dana.status).toBe(200);
    const lee = await call(app, 'POST', '/api/v1/customers', { key, body: { first_name: 'Lee', last_name: 'Chan', customer_type: 'Commercial' } });
    expect(lee.status).toBe(200);

    const cases: Array<[string, string[]]> = [
      ['DANA REY', [dana.body.data.uuid]],
      ['pure_water', [dana.body.data.uuid]],
      ['100%', [dana.body.data.uuid]],
      ['d_na', []],
      ['chan', [lee.body.data.uuid]],
      [lee.body.data.uuid, [lee.body.data.uuid]],
    ];
    for (const [term, expected] of cases) {
      const response = await call(app, 'GET', `/api/v1/customers?search=${encodeURIComponent(term)}`, { key });
      expect(response.status, term).toBe(200);
      expect(response.body.data.customers.map((customer: { uuid: string }) => customer.uuid), term).toEqual(expected);
      expect(response.body.data.pagination.total, term).toBe(expected.length);
    }
    const commercial = await call(app, 'GET', '/api/v1/customers?filter=commercial', { key });
    expect(commercial.body.data.customers.map((customer: { uuid: string }) => customer.uuid)).toEqual([lee.body.data.uuid]);

    const trgm = await database.db.execute(sql`select similarity('reyes', 'reyez') > 0 as works`);
    expect((trgm as unknown as { rows: Array<{ works: boolean }> }).rows).toEqual([{ works: true }]);
  });

  it('numbers invoices and payments at commit, in the document and in its created event', async () => {
    const { api_key: key } = await createCompany(database.db, { name: 'Numbers Co', email: 'numbers@example.com' });
    const customer = await call(app, 'POST', '/api/v1/customers', { key, body: { first_name: 'Ada', last_name: 'Lane' } });
    const job = await call(app, 'POST', '/api/v1/jobs', { key, body: { customer_uuid: customer.body.data.uuid, title: 'Boiler' } });
    const numbers: string[] = [];
    let invoiceUuid = '';
    for (let i = 0; i < 2; i += 1) {
      const invoice = await call(app, 'POST', '/api/v1/invoices', {
        key,
        body: { customer_uuid: customer.body.data.uuid, job_uuid: job.body.data.uuid, due_date: '2030-01-31', subtotal: 100 },
      });
      expect(invoice.status).toBe(200);
      numbers.push(invoice.body.data.invoice_number);
      invoiceUuid = invoice.body.data.uuid;
    }
    expect(numbers).toEqual(['INV-0001', 'INV-0002']);
    const payment = await call(app, 'POST', '/api/v1/payments', {
      key,
      body: { invoice_uuid: invoiceUuid, payment_type: 'cash', amount: 10, payment_date: '2030-01-02' },
    });
    expect(payment.status).toBe(200);
    expect(payment.body.data.payment_number).toBe('PAY-0001');
    const events = await waitForFeed(app, key, 2, { type: 'invoice.created' });
    expect(events.map((event) => event.data.object.invoice_number)).toEqual(numbers);
  });
});
