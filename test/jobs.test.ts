import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeCustomer, makeLocation, makeUser } from './helpers/factories.js';
import { makeJob } from './helpers/jobs-factories.js';
import { expectSoftDeleted } from './helpers/conventions.js';

const ctx = await buildTestApp();
const api = (path: string) => `/api/v1${path}`;

async function setup() {
  const company = await makeCompany(ctx.database);
  const customer = await makeCustomer(ctx.app, company.key, { company_name: 'Acme', email: 'dana@example.com', phone: '512-555-0100' });
  return { company, key: company.key, customer };
}

describe('POST /jobs', () => {
  it('creates a job with defaults and embeds', async () => {
    const { key, customer } = await setup();
    const response = await call(ctx.app, 'POST', api('/jobs'), { key, body: { customer_uuid: customer.uuid, title: 'Leaky faucet' } });
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    const job = response.body.data;
    expect(job).toMatchObject({
      title: 'Leaky faucet',
      status: 'New',
      priority: 'Normal',
      is_urgent: false,
      is_emergency: false,
      job_number: null,
      location_uuid: null,
      assigned_to_user_id: null,
      estimated_amount: null,
      actual_amount: null,
      started_at: null,
      completed_at: null,
      invoiced_at: null,
      paid_at: null,
      deleted_at: null,
      location: null,
      assigned_user: null,
      customer: {
        uuid: customer.uuid,
        first_name: 'Dana',
        last_name: customer.last_name,
        company_name: 'Acme',
        email: 'dana@example.com',
        phone: '512-555-0100',
      },
    });
    expect(job.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(job.created_at).toMatch(/Z$/);
    const fetched = await call(ctx.app, 'GET', api(`/jobs/${job.uuid}`), { key });
    expect(fetched.status).toBe(200);
    expect(fetched.body.data).toEqual(job);
  });

  it('accepts every optional field and returns them as stored', async () => {
    const { company, key, customer } = await setup();
    const location = await makeLocation(ctx.app, key);
    const userId = await makeUser(ctx.database, company.companyId, 'Tia', 'Tech');
    const body = {
      customer_uuid: customer.uuid,
      title: 'Install heater',
      job_number: 'J-100',
      location_uuid: location.uuid,
      assigned_to_user_id: userId,
      description: 'Gas heater',
      status: 'Scheduled',
      priority: 'High',
      is_urgent: true,
      is_emergency: true,
      service_address1: '1 Main St',
      service_address2: 'Unit 2',
      service_city: 'Austin',
      service_state: 'TX',
      service_zip: '78701-1234',
      estimated_amount: 1234.5,
      actual_amount: 99.99,
      scheduled_date: '2026-12-01',
      scheduled_time_start: '09:00',
      scheduled_time_end: '17:30',
      internal_notes: 'gate code 1234',
      customer_notes: 'call first',
    };
    const response = await call(ctx.app, 'POST', api('/jobs'), { key, body });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      ...body,
      location: { uuid: location.uuid, name: location.name },
      assigned_user: { id: userId, first_name: 'Tia', last_name: 'Tech' },
    });
  });

  it.each([
    [{ title: 'x', customer_uuid: undefined }, 'customer_uuid'],
    [{}, 'title'],
    [{ title: '   ' }, 'title'],
    [{ title: 'x', status: 'Done' }, 'status'],
    [{ title: 'x', priority: 'Urgent' }, 'priority'],
    [{ title: 'x', is_urgent: 'yes' }, 'is_urgent'],
    [{ title: 'x', estimated_amount: 1.234 }, 'estimated_amount'],
    [{ title: 'x', estimated_amount: -1 }, 'estimated_amount'],
    [{ title: 'x', actual_amount: '10' }, 'actual_amount'],
    [{ title: 'x', scheduled_date: '2026-02-30' }, 'scheduled_date'],
    [{ title: 'x', scheduled_date: '12/01/2026' }, 'scheduled_date'],
    [{ title: 'x', scheduled_time_start: '9:00' }, 'scheduled_time_start'],
    [{ title: 'x', scheduled_time_end: '24:00' }, 'scheduled_time_end'],
    [{ title: 'x', service_state: 'tx' }, 'service_state'],
    [{ title: 'x', service_zip: '1234' }, 'service_zip'],
    [{ title: 'x', location_uuid: 'not-a-uuid' }, 'location_uuid'],
    [{ title: 'x', started_at: '2026-01-01T00:00:00Z' }, 'started_at'],
    [{ title: 'x', completed_at: null }, 'completed_at'],
    [{ title: 'x', invoiced_at: null }, 'invoiced_at'],
    [{ title: 'x', paid_at: null }, 'paid_at'],
    [{ title: 'x', uuid: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70' }, 'uuid'],
    [{ title: 'x', created_at: '2026-01-01T00:00:00Z' }, 'created_at'],
    [{ title: 'x', colour: 'red' }, 'colour'],
  ])('rejects %j with 400 naming %s', async (partial, field) => {
    const { key, customer } = await setup();
    // undefined drops out of the JSON body: that is how a missing field is sent.
    const body = { customer_uuid: customer.uuid, ...partial };
    const response = await call(ctx.app, 'POST', api('/jobs'), { key, body });
    expect(response.status).toBe(400);
    expect(response.body.success).toBe(false);
    expect(response.body.error.code).toBe('validation_error');
    expect(response.body.error.details.map((detail: { field: string }) => detail.field)).toContain(field);
  });

  it('rejects references to another company, deleted records and unknown ids', async () => {
    const { key, customer } = await setup();
    const other = await makeCompany(ctx.database);
    const otherCustomer = await makeCustomer(ctx.app, other.key);
    const otherLocation = await makeLocation(ctx.app, other.key);
    const otherUser = await makeUser(ctx.database, other.companyId);
    const deletedLocation = await makeLocation(ctx.app, key);
    expect((await call(ctx.app, 'DELETE', api(`/locations/${deletedLocation.uuid}`), { key })).status).toBe(200);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ customer_uuid: otherCustomer.uuid }, 'customer_uuid'],
      [{ location_uuid: otherLocation.uuid }, 'location_uuid'],
      [{ assigned_to_user_id: otherUser }, 'assigned_to_user_id'],
      [{ location_uuid: deletedLocation.uuid }, 'location_uuid'],
      [{ assigned_to_user_id: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70' }, 'assigned_to_user_id'],
    ];
    for (const [partial, field] of cases) {
      const response = await call(ctx.app, 'POST', api('/jobs'), { key, body: { customer_uuid: customer.uuid, title: 't', ...partial } });
      expect(response.status, field).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'validation_error', details: [{ field }] });
    }
    const list = await call(ctx.app, 'GET', api('/jobs'), { key });
    expect(list.body.data.pagination.total).toBe(0);
  });

  it('stamps the timestamp of the status a job is created in', async () => {
    const { key } = await setup();
    const inProgress = await makeJob(ctx.app, key, { status: 'In Progress' });
    expect(inProgress.started_at).toMatch(/Z$/);
    expect(inProgress.completed_at).toBeNull();
    const complete = await makeJob(ctx.app, key, { status: 'Complete' });
    expect(complete.completed_at).toMatch(/Z$/);
    expect(complete.started_at).toBeNull();
    const invoiced = await makeJob(ctx.app, key, { status: 'Invoiced' });
    expect(invoiced.invoiced_at).toMatch(/Z$/);
    expect(invoiced.paid_at).toBeNull();
  });
});

describe('PUT and PATCH /jobs/{uuid}', () => {
  it('updates partially, clears with null and answers like GET', async () => {
    const { key } = await setup();
    const location = await makeLocation(ctx.app, key);
    const job = await makeJob(ctx.app, key, { description: 'old', location_uuid: location.uuid, estimated_amount: 10 });
    const patched = await call(ctx.app, 'PATCH', api(`/jobs/${job.uuid}`), {
      key,
      body: { description: null, location_uuid: null, actual_amount: 250.25, title: 'New title' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      description: null,
      location_uuid: null,
      location: null,
      actual_amount: 250.25,
      estimated_amount: 10,
      title: 'New title',
      customer: job.customer,
    });
    const put = await call(ctx.app, 'PUT', api(`/jobs/${job.uuid}`), { key, body: { priority: 'Low' } });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ priority: 'Low', title: 'New title', actual_amount: 250.25 });
    const fetched = await call(ctx.app, 'GET', api(`/jobs/${job.uuid}`), { key });
    expect(fetched.body.data).toEqual(put.body.data);
  });

  it('moves status freely and never re-stamps a timestamp', async () => {
    const { key } = await setup();
    const job = await makeJob(ctx.app, key);
    const started = await call(ctx.app, 'PATCH', api(`/jobs/${job.uuid}`), { key, body: { status: 'In Progress' } });
    expect(started.status).toBe(200);
    const startedAt = started.body.data.started_at;
    expect(startedAt).toMatch(/Z$/);
    const back = await call(ctx.app, 'PATCH', api(`/jobs/${job.uuid}`), { key, body: { status: 'New' } });
    expect(back.body.data).toMatchObject({ status: 'New', started_at: startedAt });
    const again = await call(ctx.app, 'PUT', api(`/jobs/${job.uuid}`), { key, body: { status: 'In Progress', title: 'Again' } });
    expect(again.body.data).toMatchObject({ status: 'In Progress', started_at: startedAt, title: 'Again' });
    const complete = await call(ctx.app, 'PATCH', api(`/jobs/${job.uuid}`), { key, body: { status: 'Complete' } });
    expect(complete.body.data.completed_at).toMatch(/Z$/);
    const invoiced = await call(ctx.app, 'PATCH', api(`/jobs/${job.uuid}`), { key, body: { status: 'Invoiced' } });
    expect(invoiced.body.data).toMatchObject({ status: 'Invoiced', started_at: startedAt, completed_at: complete.body.data.completed_at });
    expect(invoiced.body.data.invoiced_at).toMatch(/Z$/);
  });

  it('rejects bad values, read-only fields and foreign references', async () => {
    const { key } = await setup();
    const other = await makeCompany(ctx.database);
    const otherCustomer = await makeCustomer(ctx.app, other.key);
    const job = await makeJob(ctx.app, key);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ status: 'Closed' }, 'status'],
      [{ started_at: '2026-01-01T00:00:00Z' }, 'started_at'],
      [{ customer_uuid: null }, 'customer_uuid'],
      [{ title: null }, 'title'],
      [{ customer_uuid: otherCustomer.uuid }, 'customer_uuid'],
      [{ actual_amount: 10.001 }, 'actual_amount'],
    ];
    for (const [body, field] of cases) {
      const response = await call(ctx.app, 'PATCH', api(`/jobs/${job.uuid}`), { key, body });
      expect(response.status, field).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(response.body.error.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
    const unchanged = await call(ctx.app, 'GET', api(`/jobs/${job.uuid}`), { key });
    expect(unchanged.body.data).toEqual(job);
  });

  it('is 404 for a missing or deleted job', async () => {
    const { key } = await setup();
    const job = await makeJob(ctx.app, key);
    expect((await call(ctx.app, 'DELETE', api(`/jobs/${job.uuid}`), { key })).status).toBe(200);
    for (const uuid of [job.uuid, '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70']) {
      const response = await call(ctx.app, 'PATCH', api(`/jobs/${uuid}`), { key, body: { title: 'x' } });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });
});

describe('DELETE /jobs/{uuid}', () => {
  it('soft-deletes: hidden from GET and lists unless include_deleted', async () => {
    const { key } = await setup();
    const job = await makeJob(ctx.app, key);
    const deleted = await call(ctx.app, 'DELETE', api(`/jobs/${job.uuid}`), { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { message: 'Job deleted successfully' } });
    await expectSoftDeleted(ctx.app, key, api(`/jobs/${job.uuid}`), { title: 'x' });
    const list = await call(ctx.app, 'GET', api('/jobs'), { key });
    expect(list.body.data).toEqual({ jobs: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 0 } });
    const listAll = await call(ctx.app, 'GET', api('/jobs?include_deleted=true'), { key });
    expect(listAll.body.data.jobs.map((item: { uuid: string }) => item.uuid)).toEqual([job.uuid]);
  });
});

describe('GET /jobs', () => {
  it('filters by status (comma-separated), location, customer, assignee, priority and search', async () => {
    const { company, key, customer } = await setup();
    const otherCustomer = await makeCustomer(ctx.app, key);
    const location = await makeLocation(ctx.app, key);
    const userId = await makeUser(ctx.database, company.companyId);
    const a = await makeJob(ctx.app, key, { customer_uuid: customer.uuid, title: 'Water heater', status: 'Scheduled', priority: 'High' });
    const b = await makeJob(ctx.app, key, {
      customer_uuid: otherCustomer.uuid,
      title: 'Roof',
      description: 'Leak over the GARAGE',
      status: 'In Progress',
      location_uuid: location.uuid,
    });
    const c = await makeJob(ctx.app, key, { customer_uuid: customer.uuid, title: 'Fence', job_number: 'JN-77_x', assigned_to_user_id: userId });
    const uuids = async (query: string) => {
      const response = await call(ctx.app, 'GET', api(`/jobs?${query}`), { key });
      expect(response.status, query).toBe(200);
      expect(response.body.data.pagination.total).toBe(response.body.data.jobs.length);
      return response.body.data.jobs.map((job: { uuid: string }) => job.uuid);
    };
    expect(await uuids('')).toEqual([c.uuid, b.uuid, a.uuid]);
    expect(await uuids('status=Scheduled')).toEqual([a.uuid]);
    expect(await uuids(`status=${encodeURIComponent('Scheduled,In Progress')}`)).toEqual([b.uuid, a.uuid]);
    expect(await uuids('status=New,Scheduled')).toEqual([c.uuid, a.uuid]);
    expect(await uuids(`location_uuid=${location.uuid}`)).toEqual([b.uuid]);
    expect(await uuids(`customer_uuid=${customer.uuid}`)).toEqual([c.uuid, a.uuid]);
    expect(await uuids(`assigned_to_user_id=${userId}`)).toEqual([c.uuid]);
    expect(await uuids('priority=High')).toEqual([a.uuid]);
    expect(await uuids('search=heater')).toEqual([a.uuid]);
    expect(await uuids('search=garage')).toEqual([b.uuid]);
    expect(await uuids('search=jn-77_')).toEqual([c.uuid]);
    expect(await uuids('search=%25')).toEqual([]);
    expect(await uuids(`status=Scheduled&customer_uuid=${otherCustomer.uuid}`)).toEqual([]);
  });

  it('embeds the customer in every listed job and paginates', async () => {
    const { key, customer } = await setup();
    for (let index = 0; index < 3; index++) await makeJob(ctx.app, key, { customer_uuid: customer.uuid, title: `Job ${index}` });
    const page = await call(ctx.app, 'GET', api('/jobs?limit=2&page=2'), { key });
    expect(page.status).toBe(200);
    expect(page.body.data.pagination).toEqual({ page: 2, limit: 2, total: 3, total_pages: 2 });
    expect(page.body.data.jobs).toHaveLength(1);
    expect(page.body.data.jobs[0].title).toBe('Job 0');
    expect(page.body.data.jobs[0].customer).toEqual({
      uuid: customer.uuid,
      first_name: customer.first_name,
      last_name: customer.last_name,
      company_name: 'Acme',
      email: 'dana@example.com',
      phone: '512-555-0100',
    });
    expect(page.body.data.jobs[0]).not.toHaveProperty('location');
  });

  it.each([
    'status=Done',
    'status=New,Bogus',
    'priority=Urgent',
    'location_uuid=abc',
    'customer_uuid=abc',
    'assigned_to_user_id=abc',
    'limit=101',
    'page=0',
    'include_deleted=maybe',
    'sort=title',
  ])('rejects the query %s with 400', async (query) => {
    const { key } = await setup();
    const response = await call(ctx.app, 'GET', api(`/jobs?${query}`), { key });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
  });
});

describe('tenant isolation', () => {
  it("company B never sees or touches company A's jobs", async () => {
    const a = await setup();
    const b = await makeCompany(ctx.database);
    const job = await makeJob(ctx.app, a.key);
    for (const [method, body] of [['GET', undefined], ['PATCH', { title: 'x' }], ['PUT', { title: 'x' }], ['DELETE', undefined]] as const) {
      const response = await call(ctx.app, method, api(`/jobs/${job.uuid}`), { key: b.key, body });
      expect(response.status, method).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const withDeleted = await call(ctx.app, 'GET', api(`/jobs/${job.uuid}?include_deleted=true`), { key: b.key });
    expect(withDeleted.status).toBe(404);
    const list = await call(ctx.app, 'GET', api(`/jobs?include_deleted=true&customer_uuid=${a.customer.uuid}`), { key: b.key });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual({ jobs: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 0 } });
    const stillThere = await call(ctx.app, 'GET', api(`/jobs/${job.uuid}`), { key: a.key });
    expect(stillThere.body.data).toEqual(job);
  });

  it('needs an API key', async () => {
    const response = await call(ctx.app, 'GET', api('/jobs'));
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('unauthorized');
  });
});
