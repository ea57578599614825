import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/client.js';
import { buildTestApp, call } from './helpers/app.js';
import { eventsOf } from './helpers/events.js';
import { expectError, expectSoftDeleted, expectTransitionRefused, expectValidationError } from './helpers/conventions.js';
import { createVia, makeCompany, makeCustomer, makeLocation, makeUser } from './helpers/factories.js';

/** DECISIONS §13: visits through HTTP, against the test database (PostgreSQL when DATABASE_URL is set). */
const ctx = await buildTestApp();
const { app } = ctx;

async function setup() {
  const company = await makeCompany(ctx.database);
  const customer = await makeCustomer(app, company.key);
  const job = await createVia(app, company.key, '/jobs', { customer_uuid: customer.uuid, title: 'Replace the heater' });
  const techA = await makeUser(ctx.database, company.companyId, 'Ana', 'Alvarez');
  const techB = await makeUser(ctx.database, company.companyId, 'Ben', 'Brown');
  return { company, key: company.key, customer, job, techA, techB };
}

const visit = (jobUuid: string, overrides: Record<string, unknown> = {}) => ({
  job_uuid: jobUuid,
  starts_at: '2026-12-01T14:00:00Z',
  ends_at: '2026-12-01T16:00:00Z',
  ...overrides,
});

describe('visit fields and defaults', () => {
  it('creates a visit with every default and the embedded job and users', async () => {
    const { key, job, customer } = await setup();
    const created = await createVia(app, key, '/visits', visit(job.uuid));
    expect(created).toMatchObject({
      job_uuid: job.uuid,
      customer_uuid: customer.uuid,
      location_uuid: null,
      title: null,
      instructions: null,
      time_zone: 'America/New_York',
      starts_at: '2026-12-01T14:00:00.000Z',
      ends_at: '2026-12-01T16:00:00.000Z',
      local_date: '2026-12-01',
      local_start_time: '09:00',
      local_end_time: '11:00',
      arrival_window_minutes: null,
      assigned_user_ids: [],
      allow_overlap: false,
      status: 'Scheduled',
      dispatched_at: null,
      en_route_at: null,
      arrived_at: null,
      completed_at: null,
      cancelled_at: null,
      deleted_at: null,
      job: { uuid: job.uuid, title: 'Replace the heater', status: 'Scheduled' },
      assigned_users: [],
    });
    expect(Object.keys(created)).toEqual([
      'uuid', 'job_uuid', 'customer_uuid', 'location_uuid', 'title', 'instructions', 'time_zone', 'starts_at', 'ends_at',
      'local_date', 'local_start_time', 'local_end_time', 'arrival_window_minutes', 'assigned_user_ids', 'allow_overlap',
      'status', 'dispatched_at', 'en_route_at', 'arrived_at', 'completed_at', 'cancelled_at', 'created_at', 'updated_at',
      'deleted_at', 'job', 'assigned_users',
    ]);
    const read = await call(app, 'GET', `/api/v1/visits/${created.uuid}`, { key });
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(created);
  });

  it('keeps every field given, assigned users in their order', async () => {
    const { key, job, techA, techB } = await setup();
    const created = await createVia(
      app,
      key,
      '/visits',
      visit(job.uuid, {
        title: 'Install',
        instructions: 'Gate code 4411',
        time_zone: 'America/Chicago',
        arrival_window_minutes: 60,
        assigned_user_ids: [techB, techA],
        allow_overlap: true,
      }),
    );
    expect(created).toMatchObject({
      title: 'Install',
      instructions: 'Gate code 4411',
      time_zone: 'America/Chicago',
      local_start_time: '08:00',
      local_end_time: '10:00',
      arrival_window_minutes: 60,
      assigned_user_ids: [techB, techA],
      allow_overlap: true,
      assigned_users: [
        { id: techB, first_name: 'Ben', last_name: 'Brown' },
        { id: techA, first_name: 'Ana', last_name: 'Alvarez' },
      ],
    });
  });

  it("defaults time_zone to the job's location's, else the primary location's", async () => {
    const { key, customer } = await setup();
    const primary = await makeLocation(app, key, { timezone: 'America/Denver', is_primary: true });
    const other = await makeLocation(app, key, { timezone: 'America/Los_Angeles', name: 'West' });
    const atOther = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'West job', location_uuid: other.uuid });
    const noLocation = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Anywhere' });
    expect(primary.is_primary).toBe(true);
    const west = await createVia(app, key, '/visits', visit(atOther.uuid));
    expect(west).toMatchObject({ time_zone: 'America/Los_Angeles', location_uuid: other.uuid, local_start_time: '06:00' });
    const fallback = await createVia(app, key, '/visits', visit(noLocation.uuid));
    expect(fallback).toMatchObject({ time_zone: 'America/Denver', local_start_time: '07:00' });
  });

  it('takes the local form, read in time_zone', async () => {
    const { key, job } = await setup();
    const created = await createVia(app, key, '/visits', {
      job_uuid: job.uuid,
      time_zone: 'Europe/Berlin',
      local_date: '2026-07-01',
      local_start_time: '08:30',
      local_end_time: '12:00',
    });
    expect(created).toMatchObject({
      starts_at: '2026-07-01T06:30:00.000Z',
      ends_at: '2026-07-01T10:00:00.000Z',
      local_date: '2026-07-01',
      local_start_time: '08:30',
      local_end_time: '12:00',
    });
  });

  it('changing time_zone alone keeps the instants and recomputes the local fields', async () => {
    const { key, job } = await setup();
    const created = await createVia(app, key, '/visits', visit(job.uuid));
    const changed = await call(app, 'PATCH', `/api/v1/visits/${created.uuid}`, { key, body: { time_zone: 'Asia/Tokyo' } });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({
      starts_at: created.starts_at,
      ends_at: created.ends_at,
      time_zone: 'Asia/Tokyo',
      local_date: '2026-12-01',
      local_start_time: '23:00',
      local_end_time: '01:00',
    });
    // A local form with a new zone is read in that zone.
    const moved = await call(app, 'PUT', `/api/v1/visits/${created.uuid}`, {
      key,
      body: { time_zone: 'UTC', local_date: '2026-12-02', local_start_time: '10:00', local_end_time: '11:00' },
    });
    expect(moved.body.data).toMatchObject({ starts_at: '2026-12-02T10:00:00.000Z', ends_at: '2026-12-02T11:00:00.000Z' });
  });
});

describe('validation', () => {
  it('refuses each broken rule with 400 naming the field', async () => {
    const { key, job, techA, company } = await setup();
    const other = await makeCompany(ctx.database);
    const foreignUser = await makeUser(ctx.database, other.companyId);
    const deletedJob = await createVia(app, key, '/jobs', { customer_uuid: job.customer_uuid, title: 'Gone' });
    await call(app, 'DELETE', `/api/v1/jobs/${deletedJob.uuid}`, { key });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ starts_at: '2026-12-01T14:00:00Z', ends_at: '2026-12-01T16:00:00Z' }, 'job_uuid'],
      [visit(deletedJob.uuid), 'job_uuid'],
      [visit('019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70'), 'job_uuid'],
      [{ job_uuid: job.uuid }, 'starts_at'],
      [{ job_uuid: job.uuid, starts_at: '2026-12-01T14:00:00Z' }, 'ends_at'],
      [{ job_uuid: job.uuid, ends_at: '2026-12-01T14:00:00Z' }, 'starts_at'],
      [{ job_uuid: job.uuid, local_date: '2026-12-01', local_start_time: '09:00' }, 'local_end_time'],
      [visit(job.uuid, { local_date: '2026-12-01' }), 'local_date'],
      [visit(job.uuid, { starts_at: '2026-12-01 14:00' }), 'starts_at'],
      [visit(job.uuid, { ends_at: '2026-12-01T14:00:00Z' }), 'ends_at'],
      [visit(job.uuid, { ends_at: '2026-12-01T13:00:00Z' }), 'ends_at'],
      [visit(job.uuid, { ends_at: '2026-12-02T14:00:01Z' }), 'ends_at'],
      // So late that its local date would pass the year 9999 in a zone east of UTC.
      [visit(job.uuid, { starts_at: '9999-12-31T10:00:00Z', ends_at: '9999-12-31T11:00:00Z' }), 'starts_at'],
      [visit(job.uuid, { starts_at: '0001-01-01T10:00:00Z', ends_at: '0001-01-01T11:00:00Z' }), 'starts_at'],
      [{ job_uuid: job.uuid, local_date: '2026-12-01', local_start_time: '10:00', local_end_time: '09:00' }, 'local_end_time'],
      [{ job_uuid: job.uuid, local_date: '2026-12-01', local_start_time: '10:00', local_end_time: '10:00' }, 'local_end_time'],
      [{ job_uuid: job.uuid, local_date: '2026-02-30', local_start_time: '10:00', local_end_time: '11:00' }, 'local_date'],
      [{ job_uuid: job.uuid, local_date: '2026-12-01', local_start_time: '24:00', local_end_time: '11:00' }, 'local_start_time'],
      [visit(job.uuid, { time_zone: 'Mars/Olympus' }), 'time_zone'],
      [visit(job.uuid, { time_zone: 'america/new_york' }), 'time_zone'],
      [visit(job.uuid, { title: 'x'.repeat(201) }), 'title'],
      [visit(job.uuid, { arrival_window_minutes: -1 }), 'arrival_window_minutes'],
      [visit(job.uuid, { arrival_window_minutes: 481 }), 'arrival_window_minutes'],
      [visit(job.uuid, { arrival_window_minutes: 1.5 }), 'arrival_window_minutes'],
      [visit(job.uuid, { assigned_user_ids: [techA, techA] }), 'assigned_user_ids[1]'],
      [visit(job.uuid, { assigned_user_ids: [techA, foreignUser] }), 'assigned_user_ids[1]'],
      [visit(job.uuid, { assigned_user_ids: ['nope'] }), 'assigned_user_ids[0]'],
      [visit(job.uuid, { assigned_user_ids: Array.from({ length: 11 }, () => techA) }), 'assigned_user_ids'],
      [visit(job.uuid, { allow_overlap: 'yes' }), 'allow_overlap'],
      [visit(job.uuid, { status: 'Done' }), 'status'],
      [visit(job.uuid, { customer_uuid: job.customer_uuid }), 'customer_uuid'],
    ];
    for (const [body, field] of cases) {
      const response = await call(app, 'POST', '/api/v1/visits', { key, body });
      expectValidationError(response, field);
    }
    const list = await call(app, 'GET', '/api/v1/visits', { key });
    expect(list.body.data.pagination.total).toBe(0);
    expect(company.companyId).toBeTypeOf('string');
  });

  it('refuses a change of job_uuid as read_only, and part of a time form on update', async () => {
    const { key, job, customer } = await setup();
    const other = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Other' });
    const created = await createVia(app, key, '/visits', visit(job.uuid));
    const moved = await call(app, 'PATCH', `/api/v1/visits/${created.uuid}`, { key, body: { job_uuid: other.uuid } });
    expectValidationError(moved, 'job_uuid');
    expect(moved.body.error.details[0].code).toBe('read_only');
    expectValidationError(await call(app, 'PATCH', `/api/v1/visits/${created.uuid}`, { key, body: { ends_at: '2026-12-01T17:00:00Z' } }), 'starts_at');
    expectValidationError(await call(app, 'PATCH', `/api/v1/visits/${created.uuid}`, { key, body: { local_start_time: '10:00' } }), 'local_date');
  });
});

describe('status', () => {
  it('moves forward, skipping allowed, each first move stamping its timestamp', async () => {
    const { key, job } = await setup();
    const created = await createVia(app, key, '/visits', visit(job.uuid));
    const path = `/api/v1/visits/${created.uuid}`;
    const dispatched = await call(app, 'PATCH', path, { key, body: { status: 'Dispatched' } });
    expect(dispatched.body.data.dispatched_at).toMatch(/Z$/);
    const same = await call(app, 'PATCH', path, { key, body: { status: 'Dispatched' } });
    expect(same.status).toBe(200);
    expect(same.body.data.dispatched_at).toBe(dispatched.body.data.dispatched_at);
    const onSite = await call(app, 'PATCH', path, { key, body: { status: 'On Site' } });
    expect(onSite.body.data).toMatchObject({ status: 'On Site', en_route_at: null });
    expect(onSite.body.data.arrived_at).toMatch(/Z$/);
    expectTransitionRefused(await call(app, 'PATCH', path, { key, body: { status: 'En Route' } }));
    expectTransitionRefused(await call(app, 'PATCH', path, { key, body: { status: 'Scheduled' } }));
    const completed = await call(app, 'PATCH', path, { key, body: { status: 'Completed' } });
    expect(completed.body.data.completed_at).toMatch(/Z$/);
    expectTransitionRefused(await call(app, 'PATCH', path, { key, body: { status: 'Cancelled' } }));
    // A final visit's other fields may still change.
    expect((await call(app, 'PATCH', path, { key, body: { instructions: 'Left a note' } })).status).toBe(200);
  });

  it('cancels from any status but Completed; Cancelled is final; a create in a status stamps it', async () => {
    const { key, job } = await setup();
    const enRoute = await createVia(app, key, '/visits', visit(job.uuid, { status: 'En Route' }));
    expect(enRoute.en_route_at).toMatch(/Z$/);
    expect(enRoute.dispatched_at).toBeNull();
    const cancelled = await call(app, 'PATCH', `/api/v1/visits/${enRoute.uuid}`, { key, body: { status: 'Cancelled' } });
    expect(cancelled.body.data.cancelled_at).toMatch(/Z$/);
    expectTransitionRefused(await call(app, 'PATCH', `/api/v1/visits/${enRoute.uuid}`, { key, body: { status: 'On Site' } }));
    const completed = await createVia(app, key, '/visits', visit(job.uuid, { status: 'Completed', starts_at: '2026-12-03T14:00:00Z', ends_at: '2026-12-03T15:00:00Z' }));
    expect(completed.completed_at).toMatch(/Z$/);
  });
});

describe('the job', () => {
  it('an open visit moves a New or Contacted job to Scheduled with a job.updated event; a cancelled one does not', async () => {
    const { key, customer } = await setup();
    const fresh = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'New one', scheduled_date: '2026-11-30' });
    await createVia(app, key, '/visits', visit(fresh.uuid, { status: 'Cancelled' }));
    expect((await call(app, 'GET', `/api/v1/jobs/${fresh.uuid}`, { key })).body.data.status).toBe('New');
    await createVia(app, key, '/visits', visit(fresh.uuid));
    const job = (await call(app, 'GET', `/api/v1/jobs/${fresh.uuid}`, { key })).body.data;
    expect(job).toMatchObject({ status: 'Scheduled', scheduled_date: '2026-11-30' });
    const contacted = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Called', status: 'Contacted' });
    await createVia(app, key, '/visits', visit(contacted.uuid));
    expect((await call(app, 'GET', `/api/v1/jobs/${contacted.uuid}`, { key })).body.data.status).toBe('Scheduled');
    const started = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Going', status: 'In Progress' });
    await createVia(app, key, '/visits', visit(started.uuid));
    expect((await call(app, 'GET', `/api/v1/jobs/${started.uuid}`, { key })).body.data.status).toBe('In Progress');
    const events = await eventsOf(app, key, fresh.uuid, 2);
    expect(events.map((event: { type: string }) => event.type)).toEqual(['job.created', 'job.updated']);
    expect(events[1].data.previous_attributes).toEqual({ status: 'New' });
  });

  it('deleting a job cancels its open visits in the same transaction and frees their time', async () => {
    const { key, customer, techA } = await setup();
    const job = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'To delete' });
    const open = await createVia(app, key, '/visits', visit(job.uuid, { assigned_user_ids: [techA] }));
    const done = await createVia(app, key, '/visits', visit(job.uuid, { status: 'Completed', starts_at: '2026-11-01T14:00:00Z', ends_at: '2026-11-01T15:00:00Z' }));
    expect((await call(app, 'DELETE', `/api/v1/jobs/${job.uuid}`, { key })).status).toBe(200);
    const cancelled = (await call(app, 'GET', `/api/v1/visits/${open.uuid}`, { key })).body.data;
    expect(cancelled.status).toBe('Cancelled');
    expect(cancelled.cancelled_at).toMatch(/Z$/);
    expect((await call(app, 'GET', `/api/v1/visits/${done.uuid}`, { key })).body.data.status).toBe('Completed');
    const other = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Next' });
    const rebook = await call(app, 'POST', '/api/v1/visits', { key, body: visit(other.uuid, { assigned_user_ids: [techA] }) });
    expect(rebook.status, JSON.stringify(rebook.body)).toBe(200);
    const events = await eventsOf(app, key, open.uuid, 2);
    expect(events.map((event: { type: string }) => event.type)).toEqual(['visit.created', 'visit.updated']);
    expect(events[1].data.previous_attributes).toMatchObject({ status: 'Scheduled', cancelled_at: null });
  });

  it("moves its visits' customer_uuid and location_uuid with the job's, each a visit.updated with a new updated_at", async () => {
    const { key, job } = await setup();
    const otherCustomer = await makeCustomer(app, key);
    const location = await makeLocation(app, key);
    const booked = await createVia(app, key, '/visits', visit(job.uuid));
    const cancelled = await createVia(app, key, '/visits', visit(job.uuid, { status: 'Cancelled', starts_at: '2026-12-05T14:00:00Z', ends_at: '2026-12-05T15:00:00Z' }));
    const deleted = await createVia(app, key, '/visits', visit(job.uuid, { starts_at: '2026-12-06T14:00:00Z', ends_at: '2026-12-06T15:00:00Z' }));
    expect((await call(app, 'DELETE', `/api/v1/visits/${deleted.uuid}`, { key })).status).toBe(200);
    const since = new Date().toISOString();
    // A change of anything else leaves the visits alone.
    expect((await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { internal_notes: 'Gate code 1234' } })).status).toBe(200);
    expect((await call(app, 'GET', `/api/v1/visits/${booked.uuid}`, { key })).body.data.updated_at).toBe(booked.updated_at);

    const moved = await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { customer_uuid: otherCustomer.uuid, location_uuid: location.uuid } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    for (const before of [booked, cancelled]) {
      const now = (await call(app, 'GET', `/api/v1/visits/${before.uuid}`, { key })).body.data;
      expect(now).toMatchObject({ customer_uuid: otherCustomer.uuid, location_uuid: location.uuid });
      expect(now.updated_at > before.updated_at).toBe(true);
      const events = await eventsOf(app, key, before.uuid, 2);
      expect(events.map((event: { type: string }) => event.type)).toEqual(['visit.created', 'visit.updated']);
      expect(events[1].data.object).toEqual(now);
      expect(events[1].data.previous_attributes).toEqual({ customer_uuid: job.customer_uuid, location_uuid: null });
    }
    const synced = await call(app, 'GET', `/api/v1/visits?updated_since=${encodeURIComponent(since)}`, { key });
    expect(synced.body.data.visits.map((item: { uuid: string }) => item.uuid).sort()).toEqual([booked.uuid, cancelled.uuid].sort());
    // The deleted visit stays as it was deleted.
    const gone = (await call(app, 'GET', `/api/v1/visits/${deleted.uuid}?include_deleted=true`, { key })).body.data;
    expect(gone.customer_uuid).toBe(otherCustomer.uuid);
    expect((await eventsOf(app, key, deleted.uuid, 2)).map((event: { type: string }) => event.type)).toEqual(['visit.created', 'visit.deleted']);
  });

});

describe('no double booking', () => {
  it('refuses an overlapping visit with 409 schedule_conflict naming the user and the clash, and changes nothing', async () => {
    const { key, job, techA, techB } = await setup();
    const first = await createVia(app, key, '/visits', visit(job.uuid, { assigned_user_ids: [techA] }));
    const clash = await call(app, 'POST', '/api/v1/visits', {
      key,
      body: visit(job.uuid, { starts_at: '2026-12-01T15:00:00Z', ends_at: '2026-12-01T17:00:00Z', assigned_user_ids: [techB, techA] }),
    });
    expectError(clash, 409, 'schedule_conflict', 'assigned_user_ids[1]');
    expect(clash.body.error.details).toEqual([{ field: 'assigned_user_ids[1]', code: 'invalid', message: 'is already booked at this time' }]);
    expect(clash.body.error.conflicts).toEqual([
      { user_id: techA, visit_uuid: first.uuid, starts_at: '2026-12-01T14:00:00.000Z', ends_at: '2026-12-01T16:00:00.000Z' },
    ]);
    const list = await call(app, 'GET', '/api/v1/visits', { key });
    expect(list.body.data.pagination.total).toBe(1);
  });

  it('allows back-to-back visits and other users at the same time', async () => {
    const { key, job, techA, techB } = await setup();
    await createVia(app, key, '/visits', visit(job.uuid, { assigned_user_ids: [techA] }));
    await createVia(app, key, '/visits', visit(job.uuid, { starts_at: '2026-12-01T16:00:00Z', ends_at: '2026-12-01T17:00:00Z', assigned_user_ids: [techA] }));
    await createVia(app, key, '/visits', visit(job.uuid, { starts_at: '2026-12-01T13:00:00Z', ends_at: '2026-12-01T14:00:00Z', assigned_user_ids: [techA] }));
    await createVia(app, key, '/visits', visit(job.uuid, { assigned_user_ids: [techB] }));
  });

  it('allow_overlap is never refused and holds no one', async () => {
    const { key, job, techA } = await setup();
    await createVia(app, key, '/visits', visit(job.uuid, { assigned_user_ids: [techA] }));
    const overlapping = await createVia(app, key, '/visits', visit(job.uuid, { assigned_user_ids: [techA], allow_overlap: true }));
    // It holds no one: a later visit at that time clashes only with the first.
    const third = await call(app, 'POST', '/api/v1/visits', { key, body: visit(job.uuid, { assigned_user_ids: [techA] }) });
    expect(third.body.error.conflicts.map((conflict: { visit_uuid: string }) => conflict.visit_uuid)).not.toContain(overlapping.uuid);
    // Turning allow_overlap off makes it hold: now it clashes.
    expectError(await call(app, 'PATCH', `/api/v1/visits/${overlapping.uuid}`, { key, body: { allow_overlap: false } }), 409, 'schedule_conflict');
  });

  it('checks updates too, and a visit may move within its own time', async () => {
    const { key, job, techA, techB } = await setup();
    const first = await createVia(app, key, '/visits', visit(job.uuid, { assigned_user_ids: [techA] }));
    const second = await createVia(app, key, '/visits', visit(job.uuid, { starts_at: '2026-12-01T16:00:00Z', ends_at: '2026-12-01T18:00:00Z', assigned_user_ids: [techB] }));
    // Moving a visit over its own old time is fine.
    const shifted = await call(app, 'PATCH', `/api/v1/visits/${first.uuid}`, { key, body: { starts_at: '2026-12-01T13:00:00Z', ends_at: '2026-12-01T15:30:00Z' } });
    expect(shifted.status, JSON.stringify(shifted.body)).toBe(200);
    const clash = await call(app, 'PATCH', `/api/v1/visits/${second.uuid}`, { key, body: { assigned_user_ids: [techB, techA], starts_at: '2026-12-01T15:00:00Z', ends_at: '2026-12-01T17:00:00Z' } });
    expectError(clash, 409, 'schedule_conflict', 'assigned_user_ids[1]');
    const unchanged = await call(app, 'GET', `/api/v1/visits/${second.uuid}`, { key });
    expect(unchanged.body.data).toMatchObject({ assigned_user_ids: [techB], starts_at: '2026-12-01T16:00:00.000Z' });
  });

  it('cancelled, completed and deleted visits free their time', async () => {
    const { key, job, techA } = await setup();
    for (const free of [{ status: 'Cancelled' }, { status: 'Completed' }, null] as const) {
      const held = await createVia(app, key, '/visits', visit(job.uuid, { assigned_user_ids: [techA] }));
      expectError(await call(app, 'POST', '/api/v1/visits', { key, body: visit(job.uuid, { assigned_user_ids: [techA] }) }), 409, 'schedule_conflict');
      if (free) await call(app, 'PATCH', `/api/v1/visits/${held.uuid}`, { key, body: free });
      else await call(app, 'DELETE', `/api/v1/visits/${held.uuid}`, { key });
      const next = await createVia(app, key, '/visits', visit(job.uuid, { assigned_user_ids: [techA] }));
      await call(app, 'DELETE', `/api/v1/visits/${next.uuid}`, { key });
    }
  });

  it('clashes with time off, named in the conflicts', async () => {
    const { key, job, techA } = await setup();
    const off = await createVia(app, key, '/time_off', { user_id: techA, starts_at: '2026-12-01T00:00:00Z', ends_at: '2026-12-02T00:00:00Z', reason: 'Vacation' });
    const clash = await call(app, 'POST', '/api/v1/visits', { key, body: visit(job.uuid, { assigned_user_ids: [techA] }) });
    expectError(clash, 409, 'schedule_conflict', 'assigned_user_ids[0]');
    expect(clash.body.error.conflicts).toEqual([
      { user_id: techA, time_off_uuid: off.uuid, starts_at: '2026-12-01T00:00:00.000Z', ends_at: '2026-12-02T00:00:00.000Z' },
    ]);
  });

  it.runIf(ctx.databaseUrl !== undefined)('of 20 concurrent bookings of one user through two instances, exactly one succeeds', async () => {
    const { key, job, techA } = await setup();
    const database = await createDatabase({ DATABASE_URL: ctx.databaseUrl, DATA_DIR: 'memory://', DATABASE_POOL_SIZE: 10, STATEMENT_TIMEOUT_MS: 10_000 });
    const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0', DATABASE_URL: ctx.databaseUrl, WEBHOOK_WORKER_ENABLED: 'false' });
    const second = await buildApp({ config, database });
    await second.ready();
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          call(index % 2 === 0 ? app : second, 'POST', '/api/v1/visits', {
            key,
            body: visit(job.uuid, {
              // Every two of these overlap: they start between 10:00 and 11:35 and end after 13:00.
              starts_at: new Date(Date.UTC(2026, 11, 5, 10, index * 5)).toISOString(),
              ends_at: new Date(Date.UTC(2026, 11, 5, 13, index * 5)).toISOString(),
              assigned_user_ids: [techA],
            }),
          }),
        ),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 200), JSON.stringify(answers.map((answer) => answer.body))).toHaveLength(1);
      expect(statuses.filter((status) => status === 409)).toHaveLength(19);
      for (const answer of answers.filter((one) => one.status === 409)) {
        expect(answer.body.error.code).toBe('schedule_conflict');
        expect(answer.body.error.conflicts.length).toBeGreaterThan(0);
      }
      const list = await call(app, 'GET', `/api/v1/visits?assigned_user_id=${techA}`, { key });
      expect(list.body.data.pagination.total).toBe(1);
    } finally {
      await second.close();
      await database.close();
    }
  });
});

describe('lists', () => {
  it('filters by job, customer, location, assignee, unassigned, status and the from/to overlap window, sorted by starts_at', async () => {
    const { key, customer, techA, techB } = await setup();
    const location = await makeLocation(app, key);
    const job = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Listed', location_uuid: location.uuid });
    const otherCustomer = await makeCustomer(app, key);
    const otherJob = await createVia(app, key, '/jobs', { customer_uuid: otherCustomer.uuid, title: 'Other' });
    const at = (hour: number, length = 1) => ({
      starts_at: `2026-12-10T${String(hour).padStart(2, '0')}:00:00Z`,
      ends_at: `2026-12-10T${String(hour + length).padStart(2, '0')}:00:00Z`,
    });
    const v8 = await createVia(app, key, '/visits', { job_uuid: job.uuid, ...at(8), assigned_user_ids: [techA] });
    const v10 = await createVia(app, key, '/visits', { job_uuid: job.uuid, ...at(10, 2), assigned_user_ids: [techA, techB] });
    const v12 = await createVia(app, key, '/visits', { job_uuid: otherJob.uuid, ...at(12), status: 'Dispatched' });
    const v14 = await createVia(app, key, '/visits', { job_uuid: otherJob.uuid, ...at(14), assigned_user_ids: [techB], status: 'Cancelled' });
    const ids = async (query: string) => {
      const response = await call(app, 'GET', `/api/v1/visits?${query}`, { key });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.data.pagination.total).toBe(response.body.data.visits.length);
      return response.body.data.visits.map((row: { uuid: string }) => row.uuid);
    };
    expect(await ids('sort=starts_at')).toEqual([v8.uuid, v10.uuid, v12.uuid, v14.uuid]);
    expect(await ids('sort=-starts_at')).toEqual([v14.uuid, v12.uuid, v10.uuid, v8.uuid]);
    expect(await ids(`job_uuid=${job.uuid}&sort=starts_at`)).toEqual([v8.uuid, v10.uuid]);
    expect(await ids(`customer_uuid=${otherCustomer.uuid}&sort=starts_at`)).toEqual([v12.uuid, v14.uuid]);
    expect(await ids(`location_uuid=${location.uuid}&sort=starts_at`)).toEqual([v8.uuid, v10.uuid]);
    expect(await ids(`assigned_user_id=${techB}&sort=starts_at`)).toEqual([v10.uuid, v14.uuid]);
    expect(await ids('unassigned=true')).toEqual([v12.uuid]);
    expect(await ids('unassigned=false&sort=starts_at')).toEqual([v8.uuid, v10.uuid, v14.uuid]);
    expect(await ids('status=Dispatched,Cancelled&sort=starts_at')).toEqual([v12.uuid, v14.uuid]);
    // Overlap edges: [from, to) against [starts_at, ends_at); a visit that ends at `from` or starts at `to` is out.
    expect(await ids('from=2026-12-10T09:00:00Z&to=2026-12-10T12:00:00Z&sort=starts_at')).toEqual([v10.uuid]);
    // Offsets sent with an unencoded +, which the query decodes to a space.
    expect(await ids('from=2026-12-10T10:00:00+01:00&to=2026-12-10T13:00:00+01:00&sort=starts_at')).toEqual([v10.uuid]);
    expect(await ids('from=2026-12-10T08:59:59Z&to=2026-12-10T12:00:01Z&sort=starts_at')).toEqual([v8.uuid, v10.uuid, v12.uuid]);
    expect(await ids('from=2026-12-10T11:00:00Z&to=2026-12-10T11:00:01Z')).toEqual([v10.uuid]);
    expect(await ids('from=2026-12-10T12:00:00Z&sort=starts_at')).toEqual([v12.uuid, v14.uuid]);
    expect(await ids('to=2026-12-10T10:00:00Z')).toEqual([v8.uuid]);
    expect(await ids(`assigned_user_id=${techA}&from=2026-12-10T00:00:00Z&to=2026-12-11T00:00:00Z&sort=starts_at`)).toEqual([v8.uuid, v10.uuid]);
    expectValidationError(await call(app, 'GET', '/api/v1/visits?status=Done', { key }), 'status');
    expectValidationError(await call(app, 'GET', '/api/v1/visits?sort=ends_at', { key }), 'sort');
    expectValidationError(await call(app, 'GET', '/api/v1/visits?from=tomorrow', { key }), 'from');
    expectValidationError(await call(app, 'GET', '/api/v1/visits?unassigned=maybe', { key }), 'unassigned');
  });

  it('soft-deletes: 404 afterwards, listed only with include_deleted', async () => {
    const { key, job } = await setup();
    const created = await createVia(app, key, '/visits', visit(job.uuid));
    expect((await call(app, 'DELETE', `/api/v1/visits/${created.uuid}`, { key })).body.data.message).toBe('Visit deleted successfully');
    await expectSoftDeleted(app, key, `/api/v1/visits/${created.uuid}`, { title: 'x' });
    expect((await call(app, 'GET', '/api/v1/visits', { key })).body.data.pagination.total).toBe(0);
    expect((await call(app, 'GET', '/api/v1/visits?include_deleted=true', { key })).body.data.pagination.total).toBe(1);
  });
});

describe('events, ETags and tenancy', () => {
  it('records visit.created, visit.updated with previous_attributes and visit.deleted', async () => {
    const { key, job } = await setup();
    const created = await createVia(app, key, '/visits', visit(job.uuid));
    await call(app, 'PATCH', `/api/v1/visits/${created.uuid}`, { key, body: { title: 'Renamed' } });
    await call(app, 'DELETE', `/api/v1/visits/${created.uuid}`, { key });
    const events = await eventsOf(app, key, created.uuid, 3);
    expect(events.map((event: { type: string }) => event.type)).toEqual(['visit.created', 'visit.updated', 'visit.deleted']);
    expect(events[0].data.object).toEqual(created);
    expect(events[1].data.previous_attributes).toEqual({ title: null });
    const deleted = await call(app, 'GET', `/api/v1/visits/${created.uuid}?include_deleted=true`, { key });
    expect(events[2].data.object).toEqual(deleted.body.data);
  });

  it('answers an ETag, 304 on If-None-Match, 412 on a stale If-Match', async () => {
    const { key, job } = await setup();
    const created = await call(app, 'POST', '/api/v1/visits', { key, body: visit(job.uuid) });
    const etag = created.headers.etag as string;
    const read = await call(app, 'GET', `/api/v1/visits/${created.body.data.uuid}`, { key });
    expect(read.headers.etag).toBe(etag);
    expect((await call(app, 'GET', `/api/v1/visits/${created.body.data.uuid}`, { key, headers: { 'if-none-match': etag } })).status).toBe(304);
    const changed = await call(app, 'PATCH', `/api/v1/visits/${created.body.data.uuid}`, { key, body: { title: 'A' }, headers: { 'if-match': etag } });
    expect(changed.status).toBe(200);
    expectError(await call(app, 'PATCH', `/api/v1/visits/${created.body.data.uuid}`, { key, body: { title: 'B' }, headers: { 'if-match': etag } }), 412, 'precondition_failed');
  });

  it("another company's visits are 404 on every route, and its jobs and users are refused", async () => {
    const { key, job, techA } = await setup();
    const created = await createVia(app, key, '/visits', visit(job.uuid, { assigned_user_ids: [techA] }));
    const other = await makeCompany(ctx.database);
    for (const [method, body] of [['GET'], ['PUT', { title: 'x' }], ['PATCH', { title: 'x' }], ['DELETE']] as const) {
      expectError(await call(app, method, `/api/v1/visits/${created.uuid}`, { key: other.key, body }), 404, 'not_found');
    }
    const list = await call(app, 'GET', `/api/v1/visits?job_uuid=${job.uuid}&assigned_user_id=${techA}`, { key: other.key });
    expect(list.body.data.pagination.total).toBe(0);
    expectValidationError(await call(app, 'POST', '/api/v1/visits', { key: other.key, body: visit(job.uuid) }), 'job_uuid');
    const otherCustomer = await makeCustomer(app, other.key);
    const otherJob = await createVia(app, other.key, '/jobs', { customer_uuid: otherCustomer.uuid, title: 'Theirs' });
    expectValidationError(await call(app, 'POST', '/api/v1/visits', { key: other.key, body: visit(otherJob.uuid, { assigned_user_ids: [techA] }) }), 'assigned_user_ids[0]');
  });
});
