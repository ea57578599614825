import { afterEach, describe, expect, it, vi } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { idempotencyKeys, scheduleHolds, users, visitAssignees, visits } from '../src/db/schema/index.js';
import { OK_JSON_HEAD } from '../src/shared/envelope.js';
import { recordStatements } from './helpers/statements.js';
import { buildTestApp, call } from './helpers/app.js';
import { eventsOf } from './helpers/events.js';
import { createVia, makeCompany, makeCustomer, makeUser } from './helpers/factories.js';

/**
 * A technician's window (assigned_user_id, from, to, sort=starts_at) is answered in the JSON text each visit
 * row keeps (record_json, written by PostgreSQL's triggers: migrations/0019_visit_record_json.sql); every other
 * read goes through the mapper (visits.mapper.ts). The two must write the same text: field order, escapes,
 * timestamps and the local fields in zones with daylight-saving changes and odd offsets, and after every
 * change of what a visit embeds. And visit_assignees, which the window reads, must follow every write of a visit.
 */
const ctx = await buildTestApp();
const { app } = ctx;

afterEach(() => {
  vi.restoreAllMocks();
});

/** The `data` JSON text of a success answer, as sent. */
function dataText(raw: string): string {
  expect(raw.startsWith(OK_JSON_HEAD)).toBe(true);
  return raw.slice(OK_JSON_HEAD.length, -1);
}

async function setup() {
  const company = await makeCompany(ctx.database);
  const customer = await makeCustomer(ctx.app, company.key);
  const job = await createVia(app, company.key, '/jobs', { customer_uuid: customer.uuid, title: 'Heater "A" \\ B\n\t\u0001 é 🔧 </script>' });
  const techA = await makeUser(ctx.database, company.companyId, 'Ana "Quote"', 'Álvarez\\');
  const techB = await makeUser(ctx.database, company.companyId, 'Ben', 'O\u001fBrown');
  return { key: company.key, job, techA, techB };
}

function windowPath(user: string, from: string, to: string, extra = '') {
  return `/api/v1/visits?assigned_user_id=${user}&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&sort=starts_at${extra}`;
}

describe("a technician's window in PostgreSQL's JSON", () => {
  it('writes each visit exactly as its GET does', async () => {
    const { key, job, techA, techB } = await setup();
    const bodies: Array<Record<string, unknown>> = [
      // Across the spring-forward change in New York: 01:30 EST to 03:30 EDT.
      { time_zone: 'America/New_York', starts_at: '2026-03-08T06:30:00Z', ends_at: '2026-03-08T07:30:00Z', assigned_user_ids: [techA, techB] },
      // The repeated hour of the fall-back change, and a 30-minute shift.
      { time_zone: 'America/New_York', starts_at: '2026-11-01T05:30:00Z', ends_at: '2026-11-01T06:45:00Z', assigned_user_ids: [techB, techA], allow_overlap: true },
      { time_zone: 'Australia/Lord_Howe', starts_at: '2026-10-03T15:10:00Z', ends_at: '2026-10-03T16:20:00Z', assigned_user_ids: [techA], allow_overlap: true },
      { time_zone: 'Asia/Kolkata', starts_at: '2026-03-08T20:00:00.123Z', ends_at: '2026-03-09T19:59:59.999Z', assigned_user_ids: [techA], allow_overlap: true },
      {
        time_zone: 'Pacific/Chatham',
        starts_at: '2026-03-09T23:00:00Z',
        ends_at: '2026-03-10T01:00:00Z',
        assigned_user_ids: [techA],
        title: 'Line "one"\nline two \\ \u007f\u2028',
        instructions: '',
        arrival_window_minutes: 480,
        status: 'Completed',
      },
      { time_zone: 'UTC', starts_at: '2026-03-10T10:00:00Z', ends_at: '2026-03-10T11:00:00Z', assigned_user_ids: [techA], status: 'Cancelled', arrival_window_minutes: 0 },
    ];
    const created: string[] = [];
    for (const body of bodies) created.push((await createVia(app, key, '/visits', { job_uuid: job.uuid, ...body })).uuid);

    const sent = recordStatements();
    const list = await call(app, 'GET', windowPath(techA, '2026-03-01T00:00:00Z', '2026-12-01T00:00:00Z'), { key });
    expect(list.status, list.raw.body).toBe(200);
    // On PostgreSQL the page is the one statement on visit_assignees (PGlite answers through its own client).
    if (ctx.databaseUrl) expect(sent.filter((text) => text.includes('from visit_assignees'))).toHaveLength(1);
    vi.restoreAllMocks();
    const expected: string[] = [];
    for (const uuid of list.body.data.visits.map((item: { uuid: string }) => item.uuid)) {
      expected.push(dataText((await call(app, 'GET', `/api/v1/visits/${uuid}`, { key })).raw.body));
    }
    expect(list.body.data.visits).toHaveLength(bodies.length);
    const pagination = { page: 1, limit: 50, total: bodies.length, total_pages: 1 };
    expect(dataText(list.raw.body)).toBe(`{"visits":[${expected.join(',')}],"pagination":${JSON.stringify(pagination)}}`);
    // In start order.
    const starts = list.body.data.visits.map((item: { starts_at: string }) => item.starts_at);
    expect(starts).toEqual([...starts].sort());
    // techB has only the first two.
    const other = await call(app, 'GET', windowPath(techB, '2026-03-01T00:00:00Z', '2026-12-01T00:00:00Z'), { key });
    expect(other.body.data.visits.map((item: { uuid: string }) => item.uuid)).toEqual(created.slice(0, 2));
  });

  it('pages with the exact total, and bounds the window by overlap', async () => {
    const { key, job, techA } = await setup();
    for (let day = 1; day <= 5; day++) {
      await createVia(app, key, '/visits', { job_uuid: job.uuid, starts_at: `2026-05-0${day}T22:00:00Z`, ends_at: `2026-05-0${day + 1}T02:00:00Z`, assigned_user_ids: [techA] });
    }
    const second = await call(app, 'GET', windowPath(techA, '2026-05-01T00:00:00Z', '2026-06-01T00:00:00Z', '&limit=2&page=2'), { key });
    expect(second.body.data.pagination).toEqual({ page: 2, limit: 2, total: 5, total_pages: 3 });
    expect(second.body.data.visits.map((item: { starts_at: string }) => item.starts_at)).toEqual(['2026-05-03T22:00:00.000Z', '2026-05-04T22:00:00.000Z']);
    const beyond = await call(app, 'GET', windowPath(techA, '2026-05-01T00:00:00Z', '2026-06-01T00:00:00Z', '&limit=2&page=9'), { key });
    expect(beyond.body.data).toEqual({ visits: [], pagination: { page: 9, limit: 2, total: 5, total_pages: 3 } });
    // [from, to) overlaps [starts_at, ends_at): the visit that ends at 02:00 on the 3rd is in, the one that starts at to is out.
    const overlap = await call(app, 'GET', windowPath(techA, '2026-05-03T01:00:00Z', '2026-05-04T22:00:00Z'), { key });
    expect(overlap.body.data.visits.map((item: { starts_at: string }) => item.starts_at)).toEqual(['2026-05-02T22:00:00.000Z', '2026-05-03T22:00:00.000Z']);
    const touching = await call(app, 'GET', windowPath(techA, '2026-05-03T02:00:00Z', '2026-05-03T22:00:00Z'), { key });
    expect(touching.body.data.visits).toEqual([]);
  });

  it('follows every write of a visit: its users, its times, its job, its deletion', async () => {
    const { key, job, techA, techB } = await setup();
    const window = (user: string) => call(app, 'GET', windowPath(user, '2026-07-01T00:00:00Z', '2026-08-01T00:00:00Z'), { key });
    const uuids = async (user: string) => (await window(user)).body.data.visits.map((item: { uuid: string }) => item.uuid);
    const made = await createVia(app, key, '/visits', { job_uuid: job.uuid, starts_at: '2026-07-10T14:00:00Z', ends_at: '2026-07-10T15:00:00Z', assigned_user_ids: [techA] });
    expect(await uuids(techA)).toEqual([made.uuid]);

    expect((await call(app, 'PATCH', `/api/v1/visits/${made.uuid}`, { key, body: { assigned_user_ids: [techB] } })).status).toBe(200);
    expect(await uuids(techA)).toEqual([]);
    expect(await uuids(techB)).toEqual([made.uuid]);

    expect((await call(app, 'PATCH', `/api/v1/visits/${made.uuid}`, { key, body: { starts_at: '2026-08-10T14:00:00Z', ends_at: '2026-08-10T15:00:00Z' } })).status).toBe(200);
    expect(await uuids(techB)).toEqual([]);
    expect((await call(app, 'PATCH', `/api/v1/visits/${made.uuid}`, { key, body: { starts_at: '2026-07-20T14:00:00Z', ends_at: '2026-07-20T15:00:00Z', status: 'Completed' } })).status).toBe(200);
    expect(await uuids(techB)).toEqual([made.uuid]);

    expect((await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { title: 'Renamed' } })).status).toBe(200);
    expect((await window(techB)).body.data.visits[0].job.title).toBe('Renamed');

    expect((await call(app, 'DELETE', `/api/v1/visits/${made.uuid}`, { key })).status).toBe(200);
    expect(await uuids(techB)).toEqual([]);
  });

  it("keeps each visit's stored text its GET form through every change of what it embeds", async () => {
    const { key, job, techA, techB } = await setup();
    const other = await makeCustomer(ctx.app, key);
    const location = await createVia(app, key, '/locations', { name: 'Yard', address1: '2 Side St', city: 'Austin', state: 'TX', zip: '78702', timezone: 'America/Chicago' });
    const visit = await createVia(app, key, '/visits', {
      job_uuid: job.uuid,
      starts_at: '2026-07-10T14:00:00Z',
      ends_at: '2026-07-10T15:00:00Z',
      assigned_user_ids: [techB, techA],
    });
    const second = await createVia(app, key, '/visits', { job_uuid: job.uuid, starts_at: '2026-07-11T14:00:00Z', ends_at: '2026-07-11T15:00:00Z', assigned_user_ids: [techA] });
    /** Each live visit's window text is its GET's `data`, byte for byte. */
    const agree = async (label: string) => {
      const listed = await call(app, 'GET', windowPath(techA, '2026-07-01T00:00:00Z', '2026-08-01T00:00:00Z'), { key });
      expect(listed.status, label).toBe(200);
      const expected: string[] = [];
      for (const uuid of [visit.uuid, second.uuid]) expected.push(dataText((await call(app, 'GET', `/api/v1/visits/${uuid}`, { key })).raw.body));
      expect(dataText(listed.raw.body), label).toBe(`{"visits":[${expected.join(',')}],"pagination":{"page":1,"limit":50,"total":2,"total_pages":1}}`);
      return listed.body.data.visits as Array<Record<string, any>>;
    };
    await agree('created');
    // The job's title, its status (moved by a visit and by a PATCH), its customer and location.
    expect((await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { title: 'Boiler \u2028 "B"' } })).status).toBe(200);
    expect((await agree('job renamed'))[0].job.title).toBe('Boiler \u2028 "B"');
    expect((await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { status: 'In Progress' } })).status).toBe(200);
    expect((await agree('job moved'))[0].job.status).toBe('In Progress');
    expect((await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { customer_uuid: other.uuid, location_uuid: location.uuid } })).status).toBe(200);
    expect((await agree('job moved to another customer'))[0]).toMatchObject({ customer_uuid: other.uuid, location_uuid: location.uuid });
    // A user's name, changed outside the API.
    await ctx.database.db.update(users).set({ firstName: 'Anaé?', lastName: 'New' }).where(eq(users.uuid, techA));
    expect((await agree('user renamed'))[0].assigned_users[1]).toEqual({ id: techA, first_name: 'Anaé?', last_name: 'New' });
    // The visit's own changes: its zone (the same instants, other local fields), its status, its users' order.
    expect((await call(app, 'PATCH', `/api/v1/visits/${visit.uuid}`, { key, body: { time_zone: 'Asia/Kathmandu' } })).status).toBe(200);
    expect((await agree('zone changed'))[0].local_start_time).toBe('19:45');
    expect((await call(app, 'PATCH', `/api/v1/visits/${visit.uuid}`, { key, body: { status: 'On Site', assigned_user_ids: [techA, techB] } })).status).toBe(200);
    expect((await agree('status moved'))[0].arrived_at).not.toBeNull();
    // The window reads the copy in visit_assignees; a row from before the column (null: the migration does not
    // rewrite the tables) is made at read time.
    const copies = await ctx.database.db.select({ text: visitAssignees.recordJson }).from(visitAssignees).where(eq(visitAssignees.visitUuid, visit.uuid));
    const [own] = await ctx.database.db.select({ text: visits.recordJson }).from(visits).where(eq(visits.uuid, visit.uuid));
    expect(copies.map((copy) => copy.text)).toEqual([own.text, own.text]);
    await ctx.database.db.update(visitAssignees).set({ recordJson: null }).where(eq(visitAssignees.visitUuid, second.uuid));
    await agree('made at read time');
    // A change of the text alone (here its job's title) reaches the copies.
    expect((await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { title: 'Third title' } })).status).toBe(200);
    expect((await agree('copies follow'))[1].job.title).toBe('Third title');
  });

  it('books a visit in one statement: its answer, GET, created event, kept key answer and holds agree', async () => {
    const { key, job, techA, techB } = await setup();
    const body = {
      job_uuid: job.uuid,
      time_zone: 'America/New_York',
      local_date: '2026-11-01',
      local_start_time: '01:30',
      local_end_time: '03:00',
      assigned_user_ids: [techB, techA],
      title: 'Tune "up"',
      arrival_window_minutes: 30,
      status: 'Dispatched',
    };
    // The job's first open visit moves it to Scheduled (a transaction with the job's change); later ones leave it.
    await createVia(app, key, '/visits', { job_uuid: job.uuid, starts_at: '2026-10-01T14:00:00Z', ends_at: '2026-10-01T15:00:00Z' });
    const sent = recordStatements();
    const created = await call(app, 'POST', '/api/v1/visits', { key, body, headers: { 'idempotency-key': 'book-1' } });
    expect(created.status, created.raw.body).toBe(200);
    // On PostgreSQL: one read and one write, no transaction of several statements.
    if (ctx.databaseUrl) {
      expect(sent.some((text) => /^begin/i.test(text))).toBe(false);
      const writes = sent.filter((text) => text.includes('insert into "visits"'));
      expect(writes).toHaveLength(1);
      expect(writes[0]).toContain('insert into "schedule_holds"');
    }
    vi.restoreAllMocks();
    const uuid = created.body.data.uuid;
    expect(created.body.data).toMatchObject({ starts_at: '2026-11-01T05:30:00.000Z', ends_at: '2026-11-01T08:00:00.000Z', status: 'Dispatched' });
    expect(created.body.data.dispatched_at).toBe(created.body.data.created_at);
    const got = await call(app, 'GET', `/api/v1/visits/${uuid}`, { key });
    expect(got.raw.body).toBe(created.raw.body);
    expect(got.headers.etag).toBe(created.headers.etag);
    const feed = await eventsOf(app, key, uuid, 1);
    expect(feed.map((event) => event.type)).toEqual(['visit.created']);
    expect(JSON.stringify(feed[0].data.object)).toBe(dataText(got.raw.body));
    const [kept] = await ctx.database.db
      .select({ body: idempotencyKeys.responseBody, record: idempotencyKeys.recordUuid })
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.key, 'book-1'));
    expect(kept).toEqual({ body: created.raw.body, record: uuid });
    const replay = await call(app, 'POST', '/api/v1/visits', { key, body, headers: { 'idempotency-key': 'book-1' } });
    expect(replay.raw.body).toBe(created.raw.body);
    const held = await ctx.database.db.select({ userId: scheduleHolds.userId }).from(scheduleHolds).where(and(eq(scheduleHolds.visitUuid, uuid)));
    expect(held.map((hold) => hold.userId).sort()).toEqual([techA, techB].sort());
    // The same users at an overlapping time: 409, and nothing written.
    const clash = await call(app, 'POST', '/api/v1/visits', { key, body: { ...body, local_start_time: '02:00', local_end_time: '04:00', assigned_user_ids: [techA] } });
    expect(clash.status).toBe(409);
    expect(clash.body.error.conflicts).toEqual([{ user_id: techA, visit_uuid: uuid, starts_at: '2026-11-01T05:30:00.000Z', ends_at: '2026-11-01T08:00:00.000Z' }]);
    const listed = await call(app, 'GET', `/api/v1/visits?job_uuid=${job.uuid}`, { key });
    expect(listed.body.data.visits.map((item: { uuid: string }) => item.uuid)).toHaveLength(2);
  });

  it('books with what an earlier booking read only while the job, the users and the default zone are unchanged', async () => {
    const { key, job, techA } = await setup();
    const location = await createVia(app, key, '/locations', { name: 'Depot', address1: '1 Main St', city: 'Austin', state: 'TX', zip: '78701', timezone: 'America/Chicago', is_primary: true });
    let hour = 8;
    const book = () => {
      hour += 1;
      return call(app, 'POST', '/api/v1/visits', { key, body: { job_uuid: job.uuid, starts_at: `2026-09-01T${String(hour).padStart(2, '0')}:00:00Z`, ends_at: `2026-09-01T${String(hour).padStart(2, '0')}:30:00Z`, assigned_user_ids: [techA] } });
    };
    // The first moves the job to Scheduled; the second reads and keeps what the third then uses.
    expect((await book()).status).toBe(200);
    expect((await book()).status).toBe(200);
    const sent = recordStatements();
    const third = await book();
    expect(third.status).toBe(200);
    // Everything it needed was kept: the statement is the only one (besides the background work's).
    if (ctx.databaseUrl) expect(sent, sent.join('\n---\n')).toHaveLength(1);
    vi.restoreAllMocks();

    expect((await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { title: 'Renamed job' } })).status).toBe(200);
    expect((await book()).body.data.job.title).toBe('Renamed job');
    await ctx.database.db.update(users).set({ firstName: 'Renamed' }).where(eq(users.uuid, techA));
    expect((await book()).body.data.assigned_users[0].first_name).toBe('Renamed');
    expect((await call(app, 'PATCH', `/api/v1/locations/${location.uuid}`, { key, body: { timezone: 'Asia/Tokyo' } })).status).toBe(200);
    const tokyo = await book();
    expect(tokyo.body.data.time_zone).toBe('Asia/Tokyo');
    expect(dataText((await call(app, 'GET', `/api/v1/visits/${tokyo.body.data.uuid}`, { key })).raw.body)).toBe(dataText(tokyo.raw.body));
    // A deleted job is refused even when it was kept.
    expect((await call(app, 'DELETE', `/api/v1/jobs/${job.uuid}`, { key })).status).toBe(200);
    const gone = await book();
    expect(gone.status).toBe(400);
  });
});
