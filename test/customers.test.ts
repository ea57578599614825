import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeCustomer, makeLocation, validCustomer } from './helpers/factories.js';
import { expectError, expectSoftDeleted } from './helpers/conventions.js';

const ctx = await buildTestApp();

const CUSTOMER_FIELDS = [
  'billing_address1',
  'billing_address2',
  'billing_city',
  'billing_state',
  'billing_zip',
  'company_name',
  'created_at',
  'customer_type',
  'deleted_at',
  'email',
  'first_name',
  'internal_flags',
  'is_vip',
  'last_name',
  'notes',
  'on_my_way_notify_via',
  'phone',
  'physical_address1',
  'physical_address2',
  'physical_city',
  'physical_state',
  'physical_zip',
  'primary_service_location_uuid',
  'updated_at',
  'uuid',
];

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const post = (key: string, body: unknown) => call(ctx.app, 'POST', '/api/v1/customers', { key, body });
const get = (key: string, uuid: string, query = '') => call(ctx.app, 'GET', `/api/v1/customers/${uuid}${query}`, { key });
const list = (key: string, query = '') => call(ctx.app, 'GET', `/api/v1/customers${query}`, { key });
const uuidsOf = (response: { body: any }) => response.body.data.customers.map((customer: { uuid: string }) => customer.uuid);

describe('POST /api/v1/customers', () => {
  it('creates a customer with every field, physical and billing address included', async () => {
    const { key } = await makeCompany(ctx.database);
    const location = await makeLocation(ctx.app, key);
    const input = {
      first_name: 'Dana',
      last_name: 'Reyes',
      company_name: 'Reyes Dental',
      email: 'dana@reyes.example',
      phone: '512-555-0142',
      customer_type: 'Commercial',
      is_vip: true,
      physical_address1: '1 Main St',
      physical_address2: 'Apt 2',
      physical_city: 'Austin',
      physical_state: 'TX',
      physical_zip: '78701',
      billing_address1: 'PO Box 9',
      billing_address2: 'Attn AP',
      billing_city: 'Dallas',
      billing_state: 'TX',
      billing_zip: '75201-1234',
      primary_service_location_uuid: location.uuid,
      notes: 'Gate code 1234',
      internal_flags: { late_payer: false, tags: ['a', 'b'] },
      on_my_way_notify_via: 'both',
    };
    const response = await post(key, input);
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    const customer = response.body.data;
    expect(Object.keys(customer).sort()).toEqual(CUSTOMER_FIELDS);
    expect(customer).toMatchObject({ ...input, deleted_at: null });
    expect(customer.created_at).toMatch(ISO_UTC);
    expect(customer.updated_at).toMatch(ISO_UTC);
    const read = await get(key, customer.uuid);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ success: true, data: customer });
  });

  it('applies the defaults: Residential, not VIP, every optional field null', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await post(key, { first_name: 'Ann', last_name: 'Lee' });
    expect(response.status).toBe(200);
    const expected: Record<string, unknown> = { first_name: 'Ann', last_name: 'Lee', customer_type: 'Residential', is_vip: false };
    for (const field of CUSTOMER_FIELDS) {
      if (!(field in expected) && !['uuid', 'created_at', 'updated_at'].includes(field)) expected[field] = null;
    }
    expect(response.body.data).toMatchObject(expected);
  });

  it.each(['first_name', 'last_name'])('requires %s', async (field) => {
    const { key } = await makeCompany(ctx.database);
    const body: Record<string, unknown> = validCustomer();
    delete body[field];
    expectError(await post(key, body), 400, 'validation_error', field);
    expectError(await post(key, { ...validCustomer(), [field]: null }), 400, 'validation_error', field);
    expectError(await post(key, { ...validCustomer(), [field]: '' }), 400, 'validation_error', field);
  });

  it.each([
    ['customer_type', 'residential'],
    ['customer_type', 'Industrial'],
    ['customer_type', null],
    ['email', 'not-an-email'],
    ['email', 'a@b'],
    ['phone', '5125550142'],
    ['phone', '512-5550-142'],
    ['physical_state', 'tx'],
    ['billing_state', 'XX'],
    ['physical_zip', '1234'],
    ['billing_zip', '12345-678'],
    ['on_my_way_notify_via', 'push'],
    ['on_my_way_notify_via', 'Email'],
    ['is_vip', 'yes'],
    ['is_vip', null],
    ['internal_flags', 'flagged'],
    ['primary_service_location_uuid', 'nope'],
  ])('refuses %s = %j', async (field, value) => {
    const { key } = await makeCompany(ctx.database);
    expectError(await post(key, validCustomer({ [field]: value })), 400, 'validation_error', field);
  });

  it.each(['email', 'sms', 'both', null])('accepts on_my_way_notify_via = %j', async (value) => {
    const { key } = await makeCompany(ctx.database);
    const response = await post(key, validCustomer({ on_my_way_notify_via: value }));
    expect(response.status).toBe(200);
    expect(response.body.data.on_my_way_notify_via).toBe(value);
  });

  it('accepts the three zip spellings and null for nullable fields', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const zip of ['78701', '78701-1234', '787011234']) {
      const response = await post(key, validCustomer({ physical_zip: zip, billing_zip: zip }));
      expect(response.status).toBe(200);
      expect(response.body.data.physical_zip).toBe(zip);
    }
    const nulls = await post(key, validCustomer({ email: null, phone: null, company_name: null, internal_flags: null, notes: null }));
    expect(nulls.status).toBe(200);
    expect(nulls.body.data).toMatchObject({ email: null, phone: null, company_name: null, internal_flags: null, notes: null });
  });

  it('refuses read-only and unknown fields', async () => {
    const { key } = await makeCompany(ctx.database);
    expectError(await post(key, validCustomer({ uuid: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70' })), 400, 'validation_error', 'uuid');
    expectError(await post(key, validCustomer({ deleted_at: null })), 400, 'validation_error', 'deleted_at');
    expectError(await post(key, validCustomer({ customer_id: 'C-1' })), 400, 'validation_error', 'customer_id');
  });
});

describe('primary_service_location_uuid', () => {
  it("refuses another company's location with 400 naming the field", async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const foreign = await makeLocation(ctx.app, b.key);
    expectError(
      await post(a.key, validCustomer({ primary_service_location_uuid: foreign.uuid })),
      400,
      'validation_error',
      'primary_service_location_uuid',
    );
    const customer = await makeCustomer(ctx.app, a.key);
    expectError(
      await call(ctx.app, 'PUT', `/api/v1/customers/${customer.uuid}`, { key: a.key, body: { primary_service_location_uuid: foreign.uuid } }),
      400,
      'validation_error',
      'primary_service_location_uuid',
    );
  });

  it('refuses a deleted or unknown location', async () => {
    const { key } = await makeCompany(ctx.database);
    const location = await makeLocation(ctx.app, key);
    expect((await call(ctx.app, 'DELETE', `/api/v1/locations/${location.uuid}`, { key })).status).toBe(200);
    expectError(await post(key, validCustomer({ primary_service_location_uuid: location.uuid })), 400, 'validation_error', 'primary_service_location_uuid');
    expectError(
      await post(key, validCustomer({ primary_service_location_uuid: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70' })),
      400,
      'validation_error',
      'primary_service_location_uuid',
    );
  });

  it('accepts a live location of the company and null clears it', async () => {
    const { key } = await makeCompany(ctx.database);
    const location = await makeLocation(ctx.app, key);
    const customer = await makeCustomer(ctx.app, key, { primary_service_location_uuid: location.uuid });
    expect(customer.primary_service_location_uuid).toBe(location.uuid);
    const cleared = await call(ctx.app, 'PUT', `/api/v1/customers/${customer.uuid}`, { key, body: { primary_service_location_uuid: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.primary_service_location_uuid).toBeNull();
  });
});

describe('GET /api/v1/customers', () => {
  it('lists newest first with pagination, hiding deleted ones unless asked', async () => {
    const { key } = await makeCompany(ctx.database);
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await makeCustomer(ctx.app, key));
    expect((await call(ctx.app, 'DELETE', `/api/v1/customers/${created[1].uuid}`, { key })).status).toBe(200);
    const live = await list(key);
    expect(live.status).toBe(200);
    expect(uuidsOf(live)).toEqual([created[2].uuid, created[0].uuid]);
    expect(live.body.data.pagination).toEqual({ page: 1, limit: 50, total: 2, total_pages: 1 });
    expect(live.body.data.customers[0]).toEqual(created[2]);
    const all = await list(key, '?include_deleted=true&limit=2');
    expect(uuidsOf(all)).toEqual([created[2].uuid, created[1].uuid]);
    expect(all.body.data.pagination).toEqual({ page: 1, limit: 2, total: 3, total_pages: 2 });
    const past = await list(key, '?page=5&limit=2');
    expect(past.body.data).toEqual({ customers: [], pagination: { page: 5, limit: 2, total: 2, total_pages: 1 } });
  });

  it('filters all, residential, commercial and vip', async () => {
    const { key } = await makeCompany(ctx.database);
    const home = await makeCustomer(ctx.app, key);
    const shop = await makeCustomer(ctx.app, key, { customer_type: 'Commercial', company_name: 'Shop' });
    const vipHome = await makeCustomer(ctx.app, key, { is_vip: true });
    const vipShop = await makeCustomer(ctx.app, key, { is_vip: true, customer_type: 'Commercial' });
    const expectations: Array<[string, string[]]> = [
      ['', [vipShop, vipHome, shop, home].map((c) => c.uuid)],
      ['?filter=all', [vipShop, vipHome, shop, home].map((c) => c.uuid)],
      ['?filter=residential', [vipHome, home].map((c) => c.uuid)],
      ['?filter=commercial', [vipShop, shop].map((c) => c.uuid)],
      ['?filter=vip', [vipShop, vipHome].map((c) => c.uuid)],
    ];
    for (const [query, expected] of expectations) {
      const response = await list(key, query);
      expect(response.status, query).toBe(200);
      expect(uuidsOf(response), query).toEqual(expected);
      expect(response.body.data.pagination.total, query).toBe(expected.length);
    }
    expectError(await list(key, '?filter=Residential'), 400, 'validation_error', 'filter');
    expectError(await list(key, '?filter=gold'), 400, 'validation_error', 'filter');
  });

  it('combines filter and search with AND', async () => {
    const { key } = await makeCompany(ctx.database);
    await makeCustomer(ctx.app, key, { first_name: 'Zed', last_name: 'Home' });
    const match = await makeCustomer(ctx.app, key, { first_name: 'Zed', last_name: 'Store', customer_type: 'Commercial' });
    await makeCustomer(ctx.app, key, { first_name: 'Amy', last_name: 'Store', customer_type: 'Commercial' });
    const response = await list(key, '?filter=commercial&search=zed');
    expect(uuidsOf(response)).toEqual([match.uuid]);
    expect(response.body.data.pagination.total).toBe(1);
  });
});

describe('customer search', () => {
  async function seed(key: string) {
    const dana = await makeCustomer(ctx.app, key, {
      first_name: 'Dana',
      last_name: 'Reyes',
      company_name: 'Acme Plumbing',
      email: 'dana.reyes@mail.example',
      phone: '512-555-0142',
    });
    const omar = await makeCustomer(ctx.app, key, {
      first_name: 'Omar',
      last_name: 'Little',
      company_name: '100% Pure_Water',
      email: 'omar@water.example',
      phone: '713-555-9999',
    });
    const plain = await makeCustomer(ctx.app, key, { first_name: 'Lee', last_name: 'Chan' });
    return { dana, omar, plain };
  }

  it('matches first_name, last_name, "first last", company_name, email, phone and uuid, case-insensitively', async () => {
    const { key } = await makeCompany(ctx.database);
    const { dana, omar, plain } = await seed(key);
    const cases: Array<[string, string[]]> = [
      ['dana', [dana.uuid]],
      ['DANA', [dana.uuid]],
      ['eyE', [dana.uuid]],
      ['dana reyes', [dana.uuid]],
      ['Dana Re', [dana.uuid]],
      ['acme', [dana.uuid]],
      ['PLUMB', [dana.uuid]],
      ['water.example', [omar.uuid]],
      ['@', [omar.uuid, dana.uuid]],
      ['555-0142', [dana.uuid]],
      ['713-555', [omar.uuid]],
      [plain.uuid, [plain.uuid]],
      [plain.uuid.toUpperCase(), [plain.uuid]],
      [plain.uuid.slice(-12), [plain.uuid]],
      ['chan', [plain.uuid]],
      ['nobody', []],
    ];
    for (const [term, expected] of cases) {
      const response = await list(key, `?search=${encodeURIComponent(term)}`);
      expect(response.status, term).toBe(200);
      expect(uuidsOf(response), term).toEqual(expected);
      expect(response.body.data.pagination.total, term).toBe(expected.length);
    }
  });

  it('treats % and _ literally', async () => {
    const { key } = await makeCompany(ctx.database);
    const { omar } = await seed(key);
    const cases: Array<[string, string[]]> = [
      ['%', [omar.uuid]],
      ['100%', [omar.uuid]],
      ['_', [omar.uuid]],
      ['pure_water', [omar.uuid]],
      ['pure%water', []],
      ['d_na', []],
      ['%ana', []],
      ['\\', []],
    ];
    for (const [term, expected] of cases) {
      const response = await list(key, `?search=${encodeURIComponent(term)}`);
      expect(response.status, term).toBe(200);
      expect(uuidsOf(response), term).toEqual(expected);
    }
  });

  it('does not match across two fields', async () => {
    const { key } = await makeCompany(ctx.database);
    await makeCustomer(ctx.app, key, { first_name: 'Kim', last_name: 'Park', email: 'zz@example.com' });
    const response = await list(key, `?search=${encodeURIComponent('park zz')}`);
    expect(uuidsOf(response)).toEqual([]);
  });

  it('with an empty search lists everything', async () => {
    const { key } = await makeCompany(ctx.database);
    await seed(key);
    const response = await list(key, '?search=');
    expect(response.status).toBe(200);
    expect(response.body.data.pagination.total).toBe(3);
  });

  it('finds deleted customers only with include_deleted', async () => {
    const { key } = await makeCompany(ctx.database);
    const { dana } = await seed(key);
    await call(ctx.app, 'DELETE', `/api/v1/customers/${dana.uuid}`, { key });
    expect(uuidsOf(await list(key, '?search=dana'))).toEqual([]);
    expect(uuidsOf(await list(key, '?search=dana&include_deleted=true'))).toEqual([dana.uuid]);
  });

  it('reflects updates in search', async () => {
    const { key } = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, key, { first_name: 'Before' });
    await call(ctx.app, 'PUT', `/api/v1/customers/${customer.uuid}`, { key, body: { first_name: 'Aftermath' } });
    expect(uuidsOf(await list(key, '?search=before'))).toEqual([]);
    expect(uuidsOf(await list(key, '?search=afterm'))).toEqual([customer.uuid]);
  });

  it('refuses an over-long search term', async () => {
    const { key } = await makeCompany(ctx.database);
    expectError(await list(key, `?search=${'a'.repeat(500)}`), 400, 'validation_error', 'search');
  });
});

describe('PUT /api/v1/customers/{uuid}', () => {
  it.each(['PUT', 'PATCH'] as const)('%s updates only the given fields', async (method) => {
    const { key } = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, key, { email: 'a@b.example', phone: '512-555-0100', notes: 'n' });
    const response = await call(ctx.app, method, `/api/v1/customers/${customer.uuid}`, {
      key,
      body: { last_name: 'Changed', is_vip: true, customer_type: 'Commercial', billing_city: 'Waco', billing_state: 'TX' },
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      ...customer,
      last_name: 'Changed',
      is_vip: true,
      customer_type: 'Commercial',
      billing_city: 'Waco',
      billing_state: 'TX',
      updated_at: response.body.data.updated_at,
    });
    expect((await get(key, customer.uuid)).body.data).toEqual(response.body.data);
  });

  it('clears nullable fields with null and refuses null for required ones', async () => {
    const { key } = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, key, {
      email: 'a@b.example',
      phone: '512-555-0100',
      company_name: 'Co',
      notes: 'n',
      internal_flags: { a: 1 },
      on_my_way_notify_via: 'sms',
      physical_city: 'Austin',
      billing_zip: '78701',
    });
    const response = await call(ctx.app, 'PUT', `/api/v1/customers/${customer.uuid}`, {
      key,
      body: { email: null, phone: null, company_name: null, notes: null, internal_flags: null, on_my_way_notify_via: null, physical_city: null, billing_zip: null },
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      email: null,
      phone: null,
      company_name: null,
      notes: null,
      internal_flags: null,
      on_my_way_notify_via: null,
      physical_city: null,
      billing_zip: null,
      first_name: customer.first_name,
    });
    for (const field of ['first_name', 'last_name', 'customer_type', 'is_vip']) {
      expectError(await call(ctx.app, 'PUT', `/api/v1/customers/${customer.uuid}`, { key, body: { [field]: null } }), 400, 'validation_error', field);
    }
  });

  it('validates formats and refuses unknown fields on update', async () => {
    const { key } = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, key);
    for (const [field, value] of [['email', 'x'], ['phone', '1'], ['customer_type', 'VIP'], ['billing_state', 'Tx'], ['created_at', '2026-01-01T00:00:00Z'], ['color', 'red']] as const) {
      expectError(await call(ctx.app, 'PUT', `/api/v1/customers/${customer.uuid}`, { key, body: { [field]: value } }), 400, 'validation_error', field);
    }
    expect((await get(key, customer.uuid)).body.data).toEqual(customer);
  });
});

describe('DELETE /api/v1/customers/{uuid}', () => {
  it('soft-deletes: data.message, then 404 on get, update and delete, visible with include_deleted', async () => {
    const { key } = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, key);
    const deleted = await call(ctx.app, 'DELETE', `/api/v1/customers/${customer.uuid}`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { message: expect.any(String) } });

    const read = await expectSoftDeleted(ctx.app, key, `/api/v1/customers/${customer.uuid}`);
    expect(read.body.data).toEqual({ ...customer, deleted_at: read.body.data.deleted_at, updated_at: read.body.data.updated_at });
  });
});

describe('tenant isolation', () => {
  it("answers 404 for another company's customer and never lists or finds it", async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, a.key, { first_name: 'Secretive', email: 'secret@a.example' });
    const url = `/api/v1/customers/${customer.uuid}`;
    expectError(await call(ctx.app, 'GET', url, { key: b.key }), 404, 'not_found');
    expectError(await call(ctx.app, 'GET', `${url}?include_deleted=true`, { key: b.key }), 404, 'not_found');
    expectError(await call(ctx.app, 'PUT', url, { key: b.key, body: { notes: 'x' } }), 404, 'not_found');
    expectError(await call(ctx.app, 'PATCH', url, { key: b.key, body: { notes: 'x' } }), 404, 'not_found');
    expectError(await call(ctx.app, 'DELETE', url, { key: b.key }), 404, 'not_found');

    for (const query of ['', '?include_deleted=true', '?search=secretive', `?search=${customer.uuid}`, '?filter=residential']) {
      const response = await list(b.key, query);
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({ customers: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 0 } });
    }
    expect((await get(a.key, customer.uuid)).body.data).toEqual(customer);
  });
});
