/**
 * One definition of each record's JSON: a create in one statement (createRecord) writes its event and its
 * Idempotency-Key's answer from the record the resource's mapper makes of the row the service builds
 * (values, schema defaults, the service's clock), without reading the row back. For every type that is
 * created so, that record must be the one the mapper makes of the row PostgreSQL stored: the create's answer,
 * its GET, its created event and the key's kept answer agree, for full bodies with free-form jsonb objects
 * whose keys the database reorders, money and percentages, nulls and defaults.
 */
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { idempotencyKeys } from '../src/db/schema/index.js';
import { RECORDED_TYPES } from '../src/modules/events/recorded-types.js';
import { buildTestApp, call } from './helpers/app.js';
import { eventsOf } from './helpers/events.js';
import { makeCompany, makeLocation } from './helpers/factories.js';

const ctx = await buildTestApp();

const unordered = { zeta: 1, a: { z: [3, { y: 'x', b: null }], aa: true }, mid: 'é', bb: 2.5 };

/** Per type created in one statement: its path and full and minimal bodies (a location uuid given when needed). */
const CASES: Record<string, { path: string; bodies: (location: string) => Array<Record<string, unknown>> }> = {
  customer: {
    path: '/customers',
    bodies: (location) => [
      { first_name: 'Dana', last_name: 'Reyes' },
      {
        first_name: 'Ana',
        last_name: 'Lopez',
        company_name: 'Lopez HVAC',
        email: 'ana@example.com',
        phone: '512-555-0100',
        customer_type: 'Commercial',
        is_vip: true,
        physical_address1: '1 Main St',
        physical_city: 'Austin',
        physical_state: 'TX',
        physical_zip: '78701',
        billing_address1: 'PO Box 1',
        billing_zip: '78702-1234',
        primary_service_location_uuid: location,
        notes: 'Gate code 1234',
        internal_flags: unordered,
        on_my_way_notify_via: 'both',
      },
    ],
  },
  location: {
    path: '/locations',
    bodies: () => [
      { name: 'Depot', address1: '2 Side St', city: 'Austin', state: 'TX', zip: '78701' },
      {
        name: 'North',
        location_code: 'N-1',
        address1: '3 North St',
        address2: 'Unit 4',
        city: 'Round Rock',
        state: 'TX',
        zip: '786641234',
        phone: '512-555-0101',
        timezone: 'America/Chicago',
        business_hours: unordered,
        default_tax_rules: { rate: 8.25, zz: [], a: {} },
        service_types_offered: null,
        is_primary: false,
      },
    ],
  },
  template: {
    path: '/templates',
    bodies: () => [
      { name: 'Tune-up', pricing_type: 'flat', base_price: 89 },
      {
        name: 'Install',
        description: 'A new unit',
        pricing_type: 'tiered',
        tiers: { good: 1999.5, better: 2999, best: 4499.99 },
        addons: [
          { id: 'filter', name: 'Filter', price: 35 },
          { id: 'z', name: 'Haul away', price: 0.1 },
        ],
        tax_rate: 8.25,
      },
    ],
  },
};

describe('records created in one statement: the mapper over the service row is the record PostgreSQL stores', () => {
  it('numbers in free-form jsonb written in any JSON form: the create answer is the GET', async () => {
    const company = await makeCompany(ctx.database);
    const rawBody = '{"first_name":"N","last_name":"Forms","internal_flags":{"n":1.50,"e":1E2,"big":1e21,"tiny":1e-7,"neg":-0.0,"s":"\\u00e9"}}';
    const created = await call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, rawBody });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const got = await call(ctx.app, 'GET', `/api/v1/customers/${created.body.data.uuid}`, { key: company.key });
    expect(got.raw.body).toBe(created.raw.body);
  });

  it('covers every recorded type that is created in one statement', () => {
    const oneStatement = Object.entries(RECORDED_TYPES)
      .filter(([, type]) => type.fromRow !== undefined)
      .map(([name]) => name)
      .sort();
    expect(oneStatement).toEqual(Object.keys(CASES).sort());
  });

  for (const [type, { path, bodies }] of Object.entries(CASES)) {
    it(`${type}: the create answer, its GET, its created event and the kept Idempotency-Key answer agree`, async () => {
      const company = await makeCompany(ctx.database);
      const location = await makeLocation(ctx.app, company.key);
      for (const [index, body] of bodies(location.uuid).entries()) {
        const key = `${type}-${index}`;
        const created = await call(ctx.app, 'POST', `/api/v1${path}`, { key: company.key, body, headers: { 'idempotency-key': key } });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        const uuid = created.body.data.uuid;
        const got = await call(ctx.app, 'GET', `/api/v1${path}/${uuid}?include_deleted=true`, { key: company.key });
        expect(got.raw.body).toBe(created.raw.body);
        expect(got.headers.etag).toBe(created.headers.etag);
        const feed = await eventsOf(ctx.app, company.key, uuid, 1);
        expect(feed.map((event) => event.type)).toEqual([`${type}.created`]);
        expect(JSON.stringify(feed[0].data.object)).toBe(JSON.stringify(got.body.data));
        const [kept] = await ctx.database.db
          .select({ body: idempotencyKeys.responseBody, record: idempotencyKeys.recordUuid })
          .from(idempotencyKeys)
          .where(and(eq(idempotencyKeys.companyId, company.companyId), eq(idempotencyKeys.key, key)));
        expect(kept).toEqual({ body: created.raw.body, record: uuid });
      }
    });

    it(`${type}: an update and a delete answer, GET and record in their events the same record`, async () => {
      const company = await makeCompany(ctx.database);
      const location = await makeLocation(ctx.app, company.key);
      const [first, full] = bodies(location.uuid);
      const created = await call(ctx.app, 'POST', `/api/v1${path}`, { key: company.key, body: first });
      const uuid = created.body.data.uuid;
      const updated = await call(ctx.app, 'PATCH', `/api/v1${path}/${uuid}`, { key: company.key, body: full });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      const got = await call(ctx.app, 'GET', `/api/v1${path}/${uuid}`, { key: company.key });
      expect(got.raw.body).toBe(updated.raw.body);
      const removed = await call(ctx.app, 'DELETE', `/api/v1${path}/${uuid}`, { key: company.key });
      expect(removed.status).toBe(200);
      const gone = await call(ctx.app, 'GET', `/api/v1${path}/${uuid}?include_deleted=true`, { key: company.key });
      expect(gone.body.data.deleted_at).not.toBeNull();
      const events = await eventsOf(ctx.app, company.key, uuid, 3);
      expect(events.map((event) => event.type)).toEqual([`${type}.created`, `${type}.updated`, `${type}.deleted`]);
      expect(JSON.stringify(events[1].data.object)).toBe(JSON.stringify(got.body.data));
      expect(Object.keys(events[1].data.previous_attributes!).length).toBeGreaterThan(0);
      expect(JSON.stringify(events[2].data.object)).toBe(JSON.stringify(gone.body.data));
    });
  }
});
