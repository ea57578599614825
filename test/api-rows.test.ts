import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { customers } from '../src/db/schema/index.js';
import { customerApiFields, toCustomerResponse } from '../src/modules/customers/customers.mapper.js';
import { findCustomer, findCustomerRecord, listCustomerJson } from '../src/modules/customers/customers.repository.js';
import { CustomerResponse } from '../src/modules/customers/customers.schemas.js';
import { selectPage } from '../src/shared/tenant-table.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';

const ctx = await buildTestApp();
const db = () => ctx.database.db;

/** Bodies that reach every kind of value a customer holds: escapes, non-ASCII text, nulls, nested JSON with numbers. */
const BODIES = [
  { first_name: 'Ada', last_name: 'Lovelace' },
  {
    first_name: 'Zoë "Z" \\ Ñandú',
    last_name: 'O\'Brien \u2028 line \t tab',
    company_name: 'Émile & Søn <b>',
    email: 'zoe@example.com',
    phone: '555-010-0199',
    customer_type: 'Commercial',
    is_vip: true,
    physical_address1: '1 Rue de l’Église',
    physical_address2: null,
    physical_city: 'Montréal',
    physical_state: 'TX',
    physical_zip: '78704',
    billing_address1: 'PO Box 9',
    billing_city: 'Austin',
    billing_state: 'TX',
    billing_zip: '78701',
    notes: 'Line one\nLine two 😀 \u0001',
    internal_flags: { source: 'web', priority: 2, ratio: 1.5, big: 12345678901234, nested: { list: [1, 'two', null, true], empty: {} }, 'ключ': 'значение' },
    on_my_way_notify_via: 'both',
  },
  { first_name: 'Null', last_name: 'Flags', internal_flags: {} },
  // Text that looks like the field the JSON form writes in (apiJsonText), and every escape JSON has.
  {
    first_name: 'Quote "internal_flags":null',
    last_name: '\b\f\r\u001f\u007f </script> \\"',
    notes: '{"internal_flags":null}',
    internal_flags: { note: '"internal_flags":null', deep: [{ a: -0.5, b: 1e21, c: 'x' }] },
  },
];

/** Timestamps the database may hold: whole seconds, the last millisecond of a leap day, an old date. */
const TIMESTAMPS = ['2024-01-01 00:00:00+00', '2024-02-29 23:59:59.999+00', '1999-12-31 23:59:59.001+00', '2026-07-04 12:34:56.789+00'];

describe('customers read in their API form', () => {
  it('names every field of the record, in its order', () => {
    expect(Object.keys(customerApiFields)).toEqual(Object.keys(CustomerResponse.shape));
  });

  it('gives the same JSON as the mapper for every customer, live or deleted, by GET and in list pages', async () => {
    const company = await makeCompany(ctx.database);
    const uuids: string[] = [];
    for (const body of BODIES) {
      const created = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      uuids.push(created.body.data.uuid);
    }
    for (const [index, uuid] of uuids.entries()) {
      await db().execute(sql`update ${customers} set created_at = ${TIMESTAMPS[index]}::timestamptz,
        updated_at = ${TIMESTAMPS[(index + 1) % TIMESTAMPS.length]}::timestamptz
        where company_id = ${company.companyId} and uuid = ${uuid}`);
    }
    const removed = await call(ctx.app, 'DELETE', `/api/v1/customers/${uuids[2]}`, { key: company.key });
    expect(removed.status).toBe(200);

    for (const uuid of uuids) {
      const row = await findCustomer(db(), company.companyId, uuid, true);
      const record = await findCustomerRecord(db(), company.companyId, uuid, true);
      expect(JSON.stringify(record)).toBe(JSON.stringify(toCustomerResponse(row!)));
      const got = await call(ctx.app, 'GET', `/api/v1/customers/${uuid}?include_deleted=true`, { key: company.key });
      expect(got.status).toBe(200);
      expect(got.raw.body).toBe(`{"success":true,"data":${JSON.stringify(toCustomerResponse(row!))}}`);
    }

    for (const sort of ['-created_at', 'created_at', '-updated_at', 'updated_at'] as const) {
      for (const includeDeleted of [false, true]) {
        const query = { page: 1, limit: 50, include_deleted: includeDeleted, sort } as Parameters<typeof listCustomerJson>[2];
        const page = await listCustomerJson(db(), company.companyId, query);
        const rows = await selectPage(db(), customers, company.companyId, { includeDeleted, sort, offset: 0, limit: 50 });
        expect(`[${page.items.join(',')}]`).toBe(JSON.stringify(rows.rows.map(toCustomerResponse)));
        expect(page.items).toHaveLength(includeDeleted ? BODIES.length : BODIES.length - 1);
      }
    }
    const all = await call(ctx.app, 'GET', '/api/v1/customers?include_deleted=true&sort=created_at', { key: company.key });
    const allRows = await selectPage(db(), customers, company.companyId, { includeDeleted: true, sort: 'created_at', offset: 0, limit: 50 });
    expect(all.raw.body).toBe(
      `{"success":true,"data":{"customers":${JSON.stringify(allRows.rows.map(toCustomerResponse))},"pagination":{"page":1,"limit":50,"total":${BODIES.length},"total_pages":1}}}`,
    );
    const vip = await call(ctx.app, 'GET', '/api/v1/customers?filter=vip', { key: company.key });
    const vipRow = await findCustomer(db(), company.companyId, uuids[1]);
    expect(vip.raw.body).toBe(
      `{"success":true,"data":{"customers":[${JSON.stringify(toCustomerResponse(vipRow!))}],"pagination":{"page":1,"limit":50,"total":1,"total_pages":1}}}`,
    );
  });
});
