import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeLocation, validLocation } from './helpers/factories.js';
import { expectError, expectSoftDeleted } from './helpers/conventions.js';

const ctx = await buildTestApp();

const LOCATION_FIELDS = [
  'address1',
  'address2',
  'business_hours',
  'city',
  'created_at',
  'default_pricing_set_uuid',
  'default_tax_rules',
  'deleted_at',
  'is_active',
  'is_primary',
  'location_code',
  'name',
  'phone',
  'service_types_offered',
  'state',
  'timezone',
  'updated_at',
  'uuid',
  'zip',
];

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const post = (key: string, body: unknown) => call(ctx.app, 'POST', '/api/v1/locations', { key, body });
const get = (key: string, uuid: string, query = '') => call(ctx.app, 'GET', `/api/v1/locations/${uuid}${query}`, { key });
const list = (key: string, query = '') => call(ctx.app, 'GET', `/api/v1/locations${query}`, { key });

describe('POST /api/v1/locations', () => {
  it('creates a location with every field and returns it exactly as a GET does', async () => {
    const { key } = await makeCompany(ctx.database);
    const input = {
      name: 'Austin HQ',
      location_code: 'ATX-1',
      address1: '100 Congress Ave',
      address2: 'Suite 200',
      city: 'Austin',
      state: 'TX',
      zip: '78701-1234',
      phone: '512-555-0142',
      timezone: 'America/Chicago',
      business_hours: { mon: { open: '08:00', close: '17:00' }, sun: null },
      default_tax_rules: { rate: 8.25, exempt: ['labor'] },
      service_types_offered: { hvac: true, plumbing: false },
      default_pricing_set_uuid: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70',
      is_primary: true,
    };
    const response = await post(key, input);
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    const location = response.body.data;
    expect(Object.keys(location).sort()).toEqual(LOCATION_FIELDS);
    expect(location).toMatchObject({ ...input, is_active: true, deleted_at: null });
    expect(location.uuid).toMatch(UUID);
    expect(location.created_at).toMatch(ISO_UTC);
    expect(location.updated_at).toMatch(ISO_UTC);

    const read = await get(key, location.uuid);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ success: true, data: location });
  });

  it('applies the defaults: America/New_York, active, not primary, nullable fields null', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await post(key, validLocation({ name: 'Minimal' }));
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      name: 'Minimal',
      address1: '100 Congress Ave',
      city: 'Austin',
      state: 'TX',
      zip: '78701',
      timezone: 'America/New_York',
      is_active: true,
      is_primary: false,
      location_code: null,
      address2: null,
      phone: null,
      business_hours: null,
      default_tax_rules: null,
      service_types_offered: null,
      default_pricing_set_uuid: null,
      deleted_at: null,
    });
  });

  it.each(['name', 'address1', 'city', 'state', 'zip'])('requires %s', async (field) => {
    const { key } = await makeCompany(ctx.database);
    const body: Record<string, unknown> = validLocation();
    delete body[field];
    expectError(await post(key, body), 400, 'validation_error', field);
    expectError(await post(key, { ...validLocation(), [field]: null }), 400, 'validation_error', field);
  });

  it('refuses blank required text', async () => {
    const { key } = await makeCompany(ctx.database);
    expectError(await post(key, validLocation({ name: '   ' })), 400, 'validation_error', 'name');
    expectError(await post(key, validLocation({ city: '' })), 400, 'validation_error', 'city');
  });

  it.each([
    ['state', 'tx'],
    ['state', 'ZZ'],
    ['state', 'Texas'],
    ['state', 'T'],
    ['zip', '1234'],
    ['zip', '123456'],
    ['zip', '12345-678'],
    ['zip', '12345 6789'],
    ['zip', 'abcde'],
    ['zip', 78701],
    ['phone', '5125550142'],
    ['phone', '(512) 555-0142'],
    ['phone', '512-555-014'],
    ['phone', '512.555.0142'],
    ['timezone', 'Mars/Base'],
    ['timezone', ''],
    ['timezone', 'EST5EDT-nope'],
    ['timezone', 'america/new_york'],
    ['default_pricing_set_uuid', 'not-a-uuid'],
    ['is_primary', 'true'],
    ['business_hours', 'nine to five'],
    ['business_hours', [1, 2]],
    ['location_code', 12],
  ])('refuses %s = %j', async (field, value) => {
    const { key } = await makeCompany(ctx.database);
    expectError(await post(key, validLocation({ [field]: value })), 400, 'validation_error', field);
  });

  it.each([
    ['zip', '12345'],
    ['zip', '12345-6789'],
    ['zip', '123456789'],
    ['state', 'DC'],
    ['state', 'PR'],
    ['state', 'WY'],
    ['timezone', 'UTC'],
    ['timezone', 'Pacific/Honolulu'],
    ['phone', '212-555-0100'],
  ])('accepts %s = %s', async (field, value) => {
    const { key } = await makeCompany(ctx.database);
    const response = await post(key, validLocation({ [field]: value }));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data[field]).toBe(value);
  });

  it('takes is_active true on create and refuses false (a new location is always active)', async () => {
    const { key: own } = await makeCompany(ctx.database);
    const created = await post(own, validLocation({ is_active: true }));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.data.is_active).toBe(true);
    const { key } = await makeCompany(ctx.database);
    expectError(await post(key, validLocation({ is_active: false })), 400, 'validation_error', 'is_active');
  });
});

describe('the single primary location', () => {
  it('makes the previous primary non-primary when another is created primary', async () => {
    const { key } = await makeCompany(ctx.database);
    const first = await makeLocation(ctx.app, key, { is_primary: true });
    const second = await makeLocation(ctx.app, key, { is_primary: true });
    expect(second.is_primary).toBe(true);
    expect((await get(key, first.uuid)).body.data.is_primary).toBe(false);
    const all = (await list(key)).body.data.locations;
    expect(all.filter((location: { is_primary: boolean }) => location.is_primary).map((l: { uuid: string }) => l.uuid)).toEqual([second.uuid]);
  });

  it('makes the previous primary non-primary when another is updated to primary', async () => {
    const { key } = await makeCompany(ctx.database);
    const first = await makeLocation(ctx.app, key, { is_primary: true });
    const second = await makeLocation(ctx.app, key);
    const updated = await call(ctx.app, 'PATCH', `/api/v1/locations/${second.uuid}`, { key, body: { is_primary: true } });
    expect(updated.status).toBe(200);
    expect(updated.body.data.is_primary).toBe(true);
    expect((await get(key, first.uuid)).body.data.is_primary).toBe(false);

    // Making the primary primary again keeps it so.
    const again = await call(ctx.app, 'PUT', `/api/v1/locations/${second.uuid}`, { key, body: { is_primary: true } });
    expect(again.status).toBe(200);
    expect(again.body.data.is_primary).toBe(true);
  });

  it('keeps exactly one primary when several are made primary at once', async () => {
    const { key } = await makeCompany(ctx.database);
    const existing = await makeLocation(ctx.app, key);
    const responses = await Promise.all([
      ...Array.from({ length: 6 }, () => post(key, validLocation({ is_primary: true }))),
      call(ctx.app, 'PATCH', `/api/v1/locations/${existing.uuid}`, { key, body: { is_primary: true } }),
    ]);
    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
    const all = (await list(key)).body.data.locations;
    expect(all).toHaveLength(7);
    expect(all.filter((location: { is_primary: boolean }) => location.is_primary)).toHaveLength(1);
  });

  it('lets the primary be unset, leaving no primary', async () => {
    const { key } = await makeCompany(ctx.database);
    const first = await makeLocation(ctx.app, key, { is_primary: true });
    const unset = await call(ctx.app, 'PATCH', `/api/v1/locations/${first.uuid}`, { key, body: { is_primary: false } });
    expect(unset.status).toBe(200);
    expect(unset.body.data.is_primary).toBe(false);
    const deleted = await call(ctx.app, 'DELETE', `/api/v1/locations/${first.uuid}`, { key });
    expect(deleted.status).toBe(200);
  });

  it('keeps primaries per company', async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const primaryA = await makeLocation(ctx.app, a.key, { is_primary: true });
    const primaryB = await makeLocation(ctx.app, b.key, { is_primary: true });
    expect((await get(a.key, primaryA.uuid)).body.data.is_primary).toBe(true);
    expect((await get(b.key, primaryB.uuid)).body.data.is_primary).toBe(true);
  });

  it('does not clear the primary when the update fails', async () => {
    const { key } = await makeCompany(ctx.database);
    const first = await makeLocation(ctx.app, key, { is_primary: true });
    const second = await makeLocation(ctx.app, key);
    expectError(
      await call(ctx.app, 'PATCH', `/api/v1/locations/${second.uuid}`, { key, body: { is_primary: true, zip: 'bad' } }),
      400,
      'validation_error',
      'zip',
    );
    expect((await get(key, first.uuid)).body.data.is_primary).toBe(true);
    const missing = '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70';
    expectError(await call(ctx.app, 'PATCH', `/api/v1/locations/${missing}`, { key, body: { is_primary: true } }), 404, 'not_found');
    expect((await get(key, first.uuid)).body.data.is_primary).toBe(true);
  });
});

describe('GET /api/v1/locations', () => {
  it('lists newest first with the pagination block', async () => {
    const { key } = await makeCompany(ctx.database);
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await makeLocation(ctx.app, key, { name: `L${i}` }));
    const response = await list(key);
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    expect(response.body.data.pagination).toEqual({ page: 1, limit: 50, total: 5, total_pages: 1 });
    expect(response.body.data.locations.map((l: { uuid: string }) => l.uuid)).toEqual(created.map((l) => l.uuid).reverse());
    expect(response.body.data.locations[0]).toEqual(created[4]);
  });

  it('pages stably and gives an empty page past the end with the right total', async () => {
    const { key } = await makeCompany(ctx.database);
    const created = [];
    for (let i = 0; i < 5; i++) created.push((await makeLocation(ctx.app, key)).uuid);
    const newestFirst = [...created].reverse();
    const page1 = await list(key, '?limit=2&page=1');
    const page2 = await list(key, '?limit=2&page=2');
    const page3 = await list(key, '?limit=2&page=3');
    const page4 = await list(key, '?limit=2&page=4');
    expect(page1.body.data.pagination).toEqual({ page: 1, limit: 2, total: 5, total_pages: 3 });
    expect(page3.body.data.pagination).toEqual({ page: 3, limit: 2, total: 5, total_pages: 3 });
    const ids = [page1, page2, page3].flatMap((page) => page.body.data.locations.map((l: { uuid: string }) => l.uuid));
    expect(ids).toEqual(newestFirst);
    expect(page4.status).toBe(200);
    expect(page4.body.data).toEqual({ locations: [], pagination: { page: 4, limit: 2, total: 5, total_pages: 3 } });
  });

  it('gives total 0 and total_pages 0 for a company without locations', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await list(key);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, data: { locations: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 0 } } });
    const past = await list(key, '?page=3&limit=10');
    expect(past.body.data).toEqual({ locations: [], pagination: { page: 3, limit: 10, total: 0, total_pages: 0 } });
  });

  it('gives an exact total when the page is full', async () => {
    const { key } = await makeCompany(ctx.database);
    for (let i = 0; i < 4; i++) await makeLocation(ctx.app, key);
    const response = await list(key, '?limit=4');
    expect(response.body.data.pagination).toEqual({ page: 1, limit: 4, total: 4, total_pages: 1 });
    const page2 = await list(key, '?limit=2&page=2');
    expect(page2.body.data.pagination).toEqual({ page: 2, limit: 2, total: 4, total_pages: 2 });
    expect(page2.body.data.locations).toHaveLength(2);
  });
});

describe('PUT and PATCH /api/v1/locations/{uuid}', () => {
  it.each(['PUT', 'PATCH'] as const)('%s is a partial update: absent fields stay, given ones change', async (method) => {
    const { key } = await makeCompany(ctx.database);
    const location = await makeLocation(ctx.app, key, { phone: '512-555-0100', location_code: 'A1', business_hours: { mon: '9-5' } });
    const response = await call(ctx.app, method, `/api/v1/locations/${location.uuid}`, {
      key,
      body: { city: 'Dallas', is_active: false, business_hours: { tue: '8-4' } },
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      ...location,
      city: 'Dallas',
      is_active: false,
      business_hours: { tue: '8-4' },
      updated_at: response.body.data.updated_at,
    });
    expect(response.body.data.updated_at >= location.updated_at).toBe(true);
    expect((await get(key, location.uuid)).body.data).toEqual(response.body.data);
  });

  it('clears nullable fields with null and refuses null for required ones', async () => {
    const { key } = await makeCompany(ctx.database);
    const location = await makeLocation(ctx.app, key, {
      phone: '512-555-0100',
      address2: 'Unit 4',
      location_code: 'A1',
      business_hours: { mon: '9-5' },
      default_tax_rules: { rate: 1 },
      service_types_offered: { a: 1 },
      default_pricing_set_uuid: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70',
    });
    const cleared = await call(ctx.app, 'PATCH', `/api/v1/locations/${location.uuid}`, {
      key,
      body: {
        phone: null,
        address2: null,
        location_code: null,
        business_hours: null,
        default_tax_rules: null,
        service_types_offered: null,
        default_pricing_set_uuid: null,
      },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data).toMatchObject({
      phone: null,
      address2: null,
      location_code: null,
      business_hours: null,
      default_tax_rules: null,
      service_types_offered: null,
      default_pricing_set_uuid: null,
      name: location.name,
    });
    for (const field of ['name', 'address1', 'city', 'state', 'zip', 'timezone', 'is_primary', 'is_active']) {
      expectError(
        await call(ctx.app, 'PATCH', `/api/v1/locations/${location.uuid}`, { key, body: { [field]: null } }),
        400,
        'validation_error',
        field,
      );
    }
  });

  it('validates formats on update', async () => {
    const { key } = await makeCompany(ctx.database);
    const location = await makeLocation(ctx.app, key);
    for (const [field, value] of [['state', 'tx'], ['zip', '1234'], ['phone', '5125550100'], ['timezone', 'Mars/Base']] as const) {
      expectError(
        await call(ctx.app, 'PUT', `/api/v1/locations/${location.uuid}`, { key, body: { [field]: value } }),
        400,
        'validation_error',
        field,
      );
    }
    expect((await get(key, location.uuid)).body.data).toEqual(location);
  });

  it('accepts an empty body and changes nothing but may touch updated_at', async () => {
    const { key } = await makeCompany(ctx.database);
    const location = await makeLocation(ctx.app, key);
    const response = await call(ctx.app, 'PATCH', `/api/v1/locations/${location.uuid}`, { key, body: {} });
    expect(response.status).toBe(200);
    expect({ ...response.body.data, updated_at: location.updated_at }).toEqual(location);
  });
});

describe('DELETE /api/v1/locations/{uuid}', () => {
  it('refuses to delete the primary location with 400 primary_location', async () => {
    const { key } = await makeCompany(ctx.database);
    const primary = await makeLocation(ctx.app, key, { is_primary: true });
    expectError(await call(ctx.app, 'DELETE', `/api/v1/locations/${primary.uuid}`, { key }), 400, 'primary_location');
    const still = await get(key, primary.uuid);
    expect(still.status).toBe(200);
    expect(still.body.data.deleted_at).toBeNull();
  });

  it('soft-deletes a non-primary location: data.message, then 404 everywhere but include_deleted', async () => {
    const { key } = await makeCompany(ctx.database);
    const keep = await makeLocation(ctx.app, key);
    const location = await makeLocation(ctx.app, key);
    const deleted = await call(ctx.app, 'DELETE', `/api/v1/locations/${location.uuid}`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { message: expect.any(String) } });
    expect(deleted.body.data.message.length).toBeGreaterThan(0);

    expectError(await get(key, location.uuid, '?include_deleted=false'), 404, 'not_found');
    const withDeleted = await expectSoftDeleted(ctx.app, key, `/api/v1/locations/${location.uuid}`, { name: 'x' });
    expect(withDeleted.body.data.uuid).toBe(location.uuid);
    expect(withDeleted.body.data.name).toBe(location.name);

    const live = await list(key);
    expect(live.body.data.locations.map((l: { uuid: string }) => l.uuid)).toEqual([keep.uuid]);
    expect(live.body.data.pagination.total).toBe(1);
    const all = await list(key, '?include_deleted=true');
    expect(all.body.data.locations.map((l: { uuid: string }) => l.uuid)).toEqual([location.uuid, keep.uuid]);
    expect(all.body.data.pagination.total).toBe(2);
    expect(all.body.data.locations[0].deleted_at).toMatch(ISO_UTC);
    const viaOne = await list(key, '?include_deleted=1&limit=1');
    expect(viaOne.body.data.pagination).toEqual({ page: 1, limit: 1, total: 2, total_pages: 2 });
  });

  it('lets a deleted location be freed of its primary rule (a new primary can be made)', async () => {
    const { key } = await makeCompany(ctx.database);
    const old = await makeLocation(ctx.app, key, { is_primary: true });
    const next = await makeLocation(ctx.app, key, { is_primary: true });
    expect((await call(ctx.app, 'DELETE', `/api/v1/locations/${old.uuid}`, { key })).status).toBe(200);
    expectError(await call(ctx.app, 'DELETE', `/api/v1/locations/${next.uuid}`, { key }), 400, 'primary_location');
  });
});

describe('tenant isolation', () => {
  it("answers 404 for another company's location on every item route and hides it from lists", async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const location = await makeLocation(ctx.app, a.key);
    const url = `/api/v1/locations/${location.uuid}`;
    expectError(await call(ctx.app, 'GET', url, { key: b.key }), 404, 'not_found');
    expectError(await call(ctx.app, 'GET', `${url}?include_deleted=true`, { key: b.key }), 404, 'not_found');
    expectError(await call(ctx.app, 'PUT', url, { key: b.key, body: { name: 'Hijacked' } }), 404, 'not_found');
    expectError(await call(ctx.app, 'PATCH', url, { key: b.key, body: { is_primary: true } }), 404, 'not_found');
    expectError(await call(ctx.app, 'DELETE', url, { key: b.key }), 404, 'not_found');

    const listB = await list(b.key, '?include_deleted=true');
    expect(listB.body.data).toEqual({ locations: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 0 } });

    const own = await get(a.key, location.uuid);
    expect(own.body.data).toEqual(location);
  });

  it('does not clear the primary of another company when one is made primary', async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const primaryA = await makeLocation(ctx.app, a.key, { is_primary: true });
    const other = await makeLocation(ctx.app, b.key);
    await call(ctx.app, 'PATCH', `/api/v1/locations/${other.uuid}`, { key: b.key, body: { is_primary: true } });
    expect((await get(a.key, primaryA.uuid)).body.data.is_primary).toBe(true);
  });

  it("counts only the company's own locations in totals", async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    for (let i = 0; i < 3; i++) await makeLocation(ctx.app, a.key);
    await makeLocation(ctx.app, b.key);
    expect((await list(a.key, '?limit=1')).body.data.pagination).toEqual({ page: 1, limit: 1, total: 3, total_pages: 3 });
    expect((await list(b.key, '?limit=1')).body.data.pagination).toEqual({ page: 1, limit: 1, total: 1, total_pages: 1 });
  });
});
