import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { eventsOf } from './helpers/events.js';
import { expectError, expectSoftDeleted, expectValidationError } from './helpers/conventions.js';
import { createVia, makeCompany, makeCustomer, makeUser } from './helpers/factories.js';

/** DECISIONS §13: time off holds its user as a visit does. */
const ctx = await buildTestApp();
const { app } = ctx;

async function setup() {
  const company = await makeCompany(ctx.database);
  const tech = await makeUser(ctx.database, company.companyId, 'Tia', 'Tech');
  return { key: company.key, tech, company };
}

const off = (userId: string, overrides: Record<string, unknown> = {}) => ({
  user_id: userId,
  starts_at: '2026-12-20T00:00:00Z',
  ends_at: '2026-12-27T00:00:00Z',
  ...overrides,
});

describe('time off', () => {
  it('creates, reads, updates and soft-deletes, with reason defaulting to null', async () => {
    const { key, tech } = await setup();
    const created = await createVia(app, key, '/time_off', off(tech));
    expect(created).toMatchObject({ user_id: tech, starts_at: '2026-12-20T00:00:00.000Z', ends_at: '2026-12-27T00:00:00.000Z', reason: null, deleted_at: null });
    expect(Object.keys(created)).toEqual(['uuid', 'user_id', 'starts_at', 'ends_at', 'reason', 'created_at', 'updated_at', 'deleted_at']);
    const read = await call(app, 'GET', `/api/v1/time_off/${created.uuid}`, { key });
    expect(read.body.data).toEqual(created);
    const updated = await call(app, 'PATCH', `/api/v1/time_off/${created.uuid}`, { key, body: { reason: 'Holidays', ends_at: '2026-12-28T00:00:00Z' } });
    expect(updated.body.data).toMatchObject({ reason: 'Holidays', ends_at: '2026-12-28T00:00:00.000Z' });
    await call(app, 'DELETE', `/api/v1/time_off/${created.uuid}`, { key });
    await expectSoftDeleted(app, key, `/api/v1/time_off/${created.uuid}`, { reason: 'x' });
  });

  it('validates every rule', async () => {
    const { key, tech } = await setup();
    const other = await makeCompany(ctx.database);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ starts_at: '2026-12-20T00:00:00Z', ends_at: '2026-12-21T00:00:00Z' }, 'user_id'],
      [off(other.userId), 'user_id'],
      [off(tech, { starts_at: undefined }), 'starts_at'],
      [off(tech, { ends_at: undefined }), 'ends_at'],
      [off(tech, { ends_at: '2026-12-20T00:00:00Z' }), 'ends_at'],
      [off(tech, { ends_at: '2027-12-22T00:00:00Z' }), 'ends_at'],
      [off(tech, { reason: 5 }), 'reason'],
      [off(tech, { note: 'x' }), 'note'],
    ];
    for (const [body, field] of cases) expectValidationError(await call(app, 'POST', '/api/v1/time_off', { key, body }), field);
    // 366 days is the most.
    await createVia(app, key, '/time_off', off(tech, { starts_at: '2028-01-01T00:00:00Z', ends_at: '2029-01-01T00:00:00Z' }));
  });

  it('two entries of one user cannot overlap; other users and back-to-back are fine', async () => {
    const { key, tech, company } = await setup();
    const first = await createVia(app, key, '/time_off', off(tech));
    const clash = await call(app, 'POST', '/api/v1/time_off', { key, body: off(tech, { starts_at: '2026-12-26T00:00:00Z', ends_at: '2026-12-30T00:00:00Z' }) });
    expectError(clash, 409, 'schedule_conflict', 'user_id');
    expect(clash.body.error.conflicts).toEqual([{ user_id: tech, time_off_uuid: first.uuid, starts_at: '2026-12-20T00:00:00.000Z', ends_at: '2026-12-27T00:00:00.000Z' }]);
    await createVia(app, key, '/time_off', off(tech, { starts_at: '2026-12-27T00:00:00Z', ends_at: '2026-12-30T00:00:00Z' }));
    await createVia(app, key, '/time_off', off(company.userId));
  });

  it('clashes with a visit, and frees the time when deleted', async () => {
    const { key, tech } = await setup();
    const customer = await makeCustomer(app, key);
    const job = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Tune-up' });
    const visit = await createVia(app, key, '/visits', { job_uuid: job.uuid, starts_at: '2026-12-22T15:00:00Z', ends_at: '2026-12-22T16:00:00Z', assigned_user_ids: [tech] });
    const clash = await call(app, 'POST', '/api/v1/time_off', { key, body: off(tech) });
    expectError(clash, 409, 'schedule_conflict', 'user_id');
    expect(clash.body.error.conflicts[0]).toMatchObject({ user_id: tech, visit_uuid: visit.uuid });
    const before = await createVia(app, key, '/time_off', off(tech, { ends_at: '2026-12-22T15:00:00Z' }));
    // Moving it over the visit is refused and changes nothing.
    expectError(await call(app, 'PUT', `/api/v1/time_off/${before.uuid}`, { key, body: { ends_at: '2026-12-22T15:30:00Z' } }), 409, 'schedule_conflict');
    expect((await call(app, 'GET', `/api/v1/time_off/${before.uuid}`, { key })).body.data.ends_at).toBe('2026-12-22T15:00:00.000Z');
    await call(app, 'DELETE', `/api/v1/time_off/${before.uuid}`, { key });
    await call(app, 'DELETE', `/api/v1/visits/${visit.uuid}`, { key });
    await createVia(app, key, '/time_off', off(tech));
  });

  it('lists with user_id and the from/to overlap window, sorted by starts_at', async () => {
    const { key, tech, company } = await setup();
    const a = await createVia(app, key, '/time_off', off(tech, { starts_at: '2026-12-01T00:00:00Z', ends_at: '2026-12-02T00:00:00Z' }));
    const b = await createVia(app, key, '/time_off', off(tech, { starts_at: '2026-12-05T00:00:00Z', ends_at: '2026-12-06T00:00:00Z' }));
    const c = await createVia(app, key, '/time_off', off(company.userId, { starts_at: '2026-12-01T12:00:00Z', ends_at: '2026-12-03T00:00:00Z' }));
    const ids = async (query: string) => (await call(app, 'GET', `/api/v1/time_off?${query}`, { key })).body.data.time_off.map((row: { uuid: string }) => row.uuid);
    expect(await ids('sort=starts_at')).toEqual([a.uuid, c.uuid, b.uuid]);
    expect(await ids(`user_id=${tech}&sort=-starts_at`)).toEqual([b.uuid, a.uuid]);
    expect(await ids('from=2026-12-02T00:00:00Z&to=2026-12-05T00:00:00Z')).toEqual([c.uuid]);
    expect(await ids('from=2026-12-01T23:59:59Z&to=2026-12-05T00:00:01Z&sort=starts_at')).toEqual([a.uuid, c.uuid, b.uuid]);
    expectValidationError(await call(app, 'GET', '/api/v1/time_off?from=2026-12-05T00:00:00Z&to=2026-12-01T00:00:00Z', { key }), 'to');
  });

  it("another company's time off is 404 on every route and out of its lists", async () => {
    const { key, tech } = await setup();
    const created = await createVia(app, key, '/time_off', off(tech));
    const other = await makeCompany(ctx.database);
    for (const [method, body] of [['GET'], ['PUT', { reason: 'x' }], ['PATCH', { reason: 'x' }], ['DELETE']] as const) {
      expectError(await call(app, method, `/api/v1/time_off/${created.uuid}`, { key: other.key, body }), 404, 'not_found');
    }
    expect((await call(app, 'GET', `/api/v1/time_off?user_id=${tech}`, { key: other.key })).body.data.pagination.total).toBe(0);
  });

  it('records time_off.created, updated and deleted', async () => {
    const { key, tech } = await setup();
    const created = await createVia(app, key, '/time_off', off(tech));
    await call(app, 'PATCH', `/api/v1/time_off/${created.uuid}`, { key, body: { reason: 'Trip' } });
    await call(app, 'DELETE', `/api/v1/time_off/${created.uuid}`, { key });
    const events = await eventsOf(app, key, created.uuid, 3);
    expect(events.map((event) => event.type)).toEqual(['time_off.created', 'time_off.updated', 'time_off.deleted']);
    expect(events[1].data.previous_attributes).toEqual({ reason: null });
  });
});
