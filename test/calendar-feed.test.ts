import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/client.js';
import { buildTestApp, call } from './helpers/app.js';
import { expectError } from './helpers/conventions.js';
import { createVia, makeCompany, makeCustomer, makeUser } from './helpers/factories.js';

/** DECISIONS §13: a technician's calendar feed, read back with an independent parser (ical.js). */
const ctx = await buildTestApp({ env: { PUBLIC_BASE_URL: 'https://crm.example.com' } });
const { app } = ctx;

function parse(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  return calendar.getAllSubcomponents('vevent').map((component) => {
    const event = new ICAL.Event(component);
    return {
      uid: event.uid,
      summary: event.summary,
      location: event.location,
      description: event.description,
      sequence: event.sequence,
      start: event.startDate.toJSDate().toISOString(),
      end: event.endDate.toJSDate().toISOString(),
      status: component.getFirstPropertyValue('status'),
    };
  });
}

async function setup() {
  const company = await makeCompany(ctx.database);
  const tech = await makeUser(ctx.database, company.companyId, 'Tess', 'Tech');
  const customer = await makeCustomer(app, company.key, { email: 'dana.customer@example.com', phone: '512-555-0199' });
  const job = await createVia(app, company.key, '/jobs', {
    customer_uuid: customer.uuid,
    title: 'Boiler service',
    service_address1: '12 Elm St',
    service_city: 'Austin',
    service_state: 'TX',
    service_zip: '78701',
  });
  return { key: company.key, tech, job, company };
}

const feedPathOf = (url: string) => new URL(url).pathname;

describe('calendar feeds', () => {
  it('answers an RFC 5545 feed of the user’s visits that ical.js parses, without the customer’s email or phone', async () => {
    const { key, tech, job } = await setup();
    const link = await call(app, 'POST', `/api/v1/users/${tech}/calendar_link`, { key });
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    expect(link.body.data.url).toMatch(/^https:\/\/crm\.example\.com\/calendar\/[A-Za-z0-9_-]{43}$/);
    const titled = await createVia(app, key, '/visits', {
      job_uuid: job.uuid,
      title: 'Install',
      instructions: 'Gate code 4411',
      starts_at: '2030-01-10T14:00:00Z',
      ends_at: '2030-01-10T16:00:00Z',
      assigned_user_ids: [tech],
    });
    const untitled = await createVia(app, key, '/visits', { job_uuid: job.uuid, starts_at: '2030-01-11T14:00:00Z', ends_at: '2030-01-11T15:00:00Z', assigned_user_ids: [tech] });
    await call(app, 'PATCH', `/api/v1/visits/${untitled.uuid}`, { key, body: { status: 'Cancelled' } });
    // One clock reading for both ends: two readings a millisecond apart made the 24-hour visit below 24 h + 1 ms.
    const now = Date.now();
    const done = await createVia(app, key, '/visits', { job_uuid: job.uuid, status: 'Completed', starts_at: new Date(now - 5 * 86_400_000).toISOString(), ends_at: new Date(now - 5 * 86_400_000 + 3_600_000).toISOString(), assigned_user_ids: [tech] });
    // Not in the feed: ended more than 30 days ago, deleted, someone else's.
    await createVia(app, key, '/visits', { job_uuid: job.uuid, status: 'Completed', starts_at: new Date(now - 32 * 86_400_000).toISOString(), ends_at: new Date(now - 31 * 86_400_000).toISOString(), assigned_user_ids: [tech] });
    const deleted = await createVia(app, key, '/visits', { job_uuid: job.uuid, starts_at: '2030-01-12T14:00:00Z', ends_at: '2030-01-12T15:00:00Z', assigned_user_ids: [tech] });
    await call(app, 'DELETE', `/api/v1/visits/${deleted.uuid}`, { key });
    await createVia(app, key, '/visits', { job_uuid: job.uuid, starts_at: '2030-01-13T14:00:00Z', ends_at: '2030-01-13T15:00:00Z' });

    const feed = await app.inject({ method: 'GET', url: feedPathOf(link.body.data.url) });
    expect(feed.statusCode).toBe(200);
    expect(feed.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(feed.body).not.toMatch(/dana\.customer|512-555-0199/);
    const events = parse(feed.body);
    expect(events.map((event) => event.uid)).toEqual([`${done.uuid}@crm.example.com`, `${titled.uuid}@crm.example.com`, `${untitled.uuid}@crm.example.com`]);
    expect(events[1]).toMatchObject({
      summary: 'Install',
      location: '12 Elm St, Austin, TX 78701',
      description: 'Gate code 4411',
      start: '2030-01-10T14:00:00.000Z',
      end: '2030-01-10T16:00:00.000Z',
      status: 'CONFIRMED',
    });
    expect(events[2]).toMatchObject({ summary: 'Boiler service', status: 'CANCELLED' });
    // SEQUENCE grows with every change.
    const before = events[1].sequence;
    await call(app, 'PATCH', `/api/v1/visits/${titled.uuid}`, { key, body: { title: 'Install (moved)', starts_at: '2030-01-10T15:00:00Z', ends_at: '2030-01-10T17:00:00Z' } });
    const again = parse((await app.inject({ method: 'GET', url: feedPathOf(link.body.data.url) })).body);
    expect(again[1]).toMatchObject({ summary: 'Install (moved)', start: '2030-01-10T15:00:00.000Z' });
    expect(again[1].sequence).toBeGreaterThan(before);
  });

  it('an empty visit title shows the job’s; a change of the job’s title or address raises SEQUENCE', async () => {
    const { key, tech, job } = await setup();
    const url = feedPathOf((await call(app, 'POST', `/api/v1/users/${tech}/calendar_link`, { key })).body.data.url);
    await createVia(app, key, '/visits', { job_uuid: job.uuid, title: '', starts_at: '2030-02-10T14:00:00Z', ends_at: '2030-02-10T15:00:00Z', assigned_user_ids: [tech] });
    const [first] = parse((await app.inject({ method: 'GET', url })).body);
    expect(first.summary).toBe('Boiler service');
    // Unchanged job fields leave it; a new title or address is a new version of the event.
    await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { title: 'Boiler service', description: 'More detail' } });
    const [same] = parse((await app.inject({ method: 'GET', url })).body);
    expect(same.sequence).toBe(first.sequence);
    await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { title: 'Boiler repair' } });
    const [renamed] = parse((await app.inject({ method: 'GET', url })).body);
    expect(renamed).toMatchObject({ summary: 'Boiler repair' });
    expect(renamed.sequence).toBeGreaterThan(first.sequence);
    await call(app, 'PATCH', `/api/v1/jobs/${job.uuid}`, { key, body: { service_address1: '14 Elm St' } });
    const [moved] = parse((await app.inject({ method: 'GET', url })).body);
    expect(moved.location).toBe('14 Elm St, Austin, TX 78701');
    expect(moved.sequence).toBeGreaterThan(renamed.sequence);
  });

  it('a calendar link takes no body: a field is 400 unknown_field, an empty object is none', async () => {
    const { key, tech } = await setup();
    const refused = await call(app, 'POST', `/api/v1/users/${tech}/calendar_link`, { key, body: { foo: 1 } });
    expectError(refused, 400, 'validation_error');
    expect(refused.body.error.details).toEqual([{ field: 'foo', code: 'unknown_field', message: expect.any(String) }]);
    expect((await call(app, 'POST', `/api/v1/users/${tech}/calendar_link`, { key, body: {} })).status).toBe(200);
    const revoke = await call(app, 'DELETE', `/api/v1/users/${tech}/calendar_link`, { key, body: { all: true } });
    expectError(revoke, 400, 'validation_error');
    expect(revoke.body.error.details[0]).toMatchObject({ field: 'all', code: 'unknown_field' });
  });

  it('revokes every earlier link of the user at once, on every instance; a new link works', async () => {
    const { key, tech } = await setup();
    const first = feedPathOf((await call(app, 'POST', `/api/v1/users/${tech}/calendar_link`, { key })).body.data.url);
    const second = feedPathOf((await call(app, 'POST', `/api/v1/users/${tech}/calendar_link`, { key })).body.data.url);
    expect(first).not.toBe(second);
    const other = ctx.databaseUrl
      ? await (async () => {
          const database = await createDatabase({ DATABASE_URL: ctx.databaseUrl, DATA_DIR: 'memory://', DATABASE_POOL_SIZE: 2, STATEMENT_TIMEOUT_MS: 10_000 });
          const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: ctx.databaseUrl, SHARE_RATE_LIMIT_PER_MINUTE: '0', WEBHOOK_WORKER_ENABLED: 'false' });
          const built = await buildApp({ config, database });
          await built.ready();
          return { app: built, close: async () => { await built.close(); await database.close(); } };
        })()
      : { app, close: async () => undefined };
    try {
      for (const instance of [app, other.app]) {
        expect((await instance.inject({ method: 'GET', url: first })).statusCode).toBe(200);
        expect((await instance.inject({ method: 'GET', url: second })).statusCode).toBe(200);
      }
      const revoked = await call(app, 'DELETE', `/api/v1/users/${tech}/calendar_link`, { key });
      expect(revoked.status).toBe(200);
      for (const instance of [app, other.app]) {
        for (const path of [first, second]) {
          const response = await instance.inject({ method: 'GET', url: path });
          expect(response.statusCode).toBe(404);
          expect(response.json().error.code).toBe('not_found');
        }
      }
      const fresh = feedPathOf((await call(app, 'POST', `/api/v1/users/${tech}/calendar_link`, { key })).body.data.url);
      expect((await other.app.inject({ method: 'GET', url: fresh })).statusCode).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('unknown tokens are 404; another company’s user is 404 on both routes', async () => {
    const { key, tech } = await setup();
    expect((await app.inject({ method: 'GET', url: '/calendar/nothing-here' })).statusCode).toBe(404);
    const other = await makeCompany(ctx.database);
    expectError(await call(app, 'POST', `/api/v1/users/${tech}/calendar_link`, { key: other.key }), 404, 'not_found');
    expectError(await call(app, 'DELETE', `/api/v1/users/${tech}/calendar_link`, { key: other.key }), 404, 'not_found');
    expectError(await call(app, 'POST', '/api/v1/users/019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70/calendar_link', { key }), 404, 'not_found');
    expect((await call(app, 'POST', `/api/v1/users/${tech}/calendar_link`, { key })).status).toBe(200);
  });

  it('writes a large feed in the rendering pool, not on the event loop (§11), with the same text', async () => {
    const { key, tech, job } = await setup();
    const link = await call(app, 'POST', `/api/v1/users/${tech}/calendar_link`, { key });
    const path = feedPathOf(link.body.data.url);
    const small = await app.inject({ method: 'GET', url: path });
    expect(small.statusCode).toBe(200);
    const rendersBefore = app.documentRenderer.completed;
    const instructions = 'Bring the long ladder; the side gate sticks. '.repeat(50);
    for (let day = 1; day <= 8; day++) {
      await createVia(app, key, '/visits', {
        job_uuid: job.uuid,
        instructions,
        starts_at: `2031-02-${String(day).padStart(2, '0')}T14:00:00Z`,
        ends_at: `2031-02-${String(day).padStart(2, '0')}T15:00:00Z`,
        assigned_user_ids: [tech],
      });
    }
    const large = await app.inject({ method: 'GET', url: path });
    expect(large.statusCode).toBe(200);
    expect(large.headers['content-type']).toBe('text/calendar; charset=utf-8');
    // Every content line ends with CRLF (RFC 5545 §3.1), the last one too, inline or from the pool.
    for (const body of [small.body, large.body]) {
      expect(body.endsWith('END:VCALENDAR\r\n')).toBe(true);
      expect(body.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    }
    expect(app.documentRenderer.completed).toBe(rendersBefore + 1);
    const events = parse(large.body);
    expect(events).toHaveLength(8);
    expect(events.every((event) => event.description === instructions)).toBe(true);
    expect(events.map((event) => event.start)).toEqual(Array.from({ length: 8 }, (_, i) => `2031-02-0${i + 1}T14:00:00.000Z`));
  });

  it('feeds share the keyless routes’ limit per client address', async () => {
    const limited = await buildTestApp({ env: { SHARE_RATE_LIMIT_PER_MINUTE: '2' } });
    const company = await makeCompany(limited.database);
    const link = await call(limited.app, 'POST', `/api/v1/users/${company.userId}/calendar_link`, { key: company.key });
    const path = feedPathOf(link.body.data.url);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await limited.app.inject({ method: 'GET', url: path })).statusCode);
    expect(statuses).toEqual([200, 200, 429]);
  });
});
