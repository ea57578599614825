import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { expectValidationError } from './helpers/conventions.js';
import { createVia, makeCompany, makeCustomer } from './helpers/factories.js';

/** DECISIONS §13: wall-clock times across daylight-saving changes, with the platform's zone rules. */
const ctx = await buildTestApp();
const { app } = ctx;
const company = await makeCompany(ctx.database);
const { key } = company;
const customer = await makeCustomer(app, key);
const job = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Clock work' });

const local = (timeZone: string, date: string, start: string, end: string) =>
  call(app, 'POST', '/api/v1/visits', { key, body: { job_uuid: job.uuid, time_zone: timeZone, local_date: date, local_start_time: start, local_end_time: end } });

describe('America/New_York', () => {
  it('2026-03-08: 02:30 does not exist (400 naming the field); the day is 23 hours long', async () => {
    const gap = await local('America/New_York', '2026-03-08', '02:30', '04:00');
    expectValidationError(gap, 'local_start_time');
    expect(gap.body.error.details[0].message).toContain('daylight-saving');
    expectValidationError(await local('America/New_York', '2026-03-08', '01:00', '02:15'), 'local_end_time');
    const across = await local('America/New_York', '2026-03-08', '01:30', '03:30');
    expect(across.status).toBe(200);
    // 01:30 EST is 06:30Z; 03:30 EDT is 07:30Z: one hour of real time.
    expect(across.body.data).toMatchObject({ starts_at: '2026-03-08T06:30:00.000Z', ends_at: '2026-03-08T07:30:00.000Z', local_start_time: '01:30', local_end_time: '03:30' });
  });

  it('2026-11-01: 01:30 occurs twice and means its first occurrence (EDT)', async () => {
    const repeated = await local('America/New_York', '2026-11-01', '01:30', '01:45');
    expect(repeated.status).toBe(200);
    expect(repeated.body.data).toMatchObject({ starts_at: '2026-11-01T05:30:00.000Z', ends_at: '2026-11-01T05:45:00.000Z', local_date: '2026-11-01', local_start_time: '01:30' });
    // The instant of the second 01:30 (EST) reads back as 01:30 too: local fields come from the instants.
    const second = await createVia(app, key, '/visits', { job_uuid: job.uuid, time_zone: 'America/New_York', starts_at: '2026-11-01T06:30:00Z', ends_at: '2026-11-01T07:00:00Z' });
    expect(second).toMatchObject({ local_start_time: '01:30', local_end_time: '02:00' });
    // 00:30 to 03:30 that day is four real hours.
    const long = await local('America/New_York', '2026-11-01', '00:30', '03:30');
    expect(long.body.data).toMatchObject({ starts_at: '2026-11-01T04:30:00.000Z', ends_at: '2026-11-01T08:30:00.000Z' });
  });
});

describe('Australia/Lord_Howe (a 30-minute shift)', () => {
  it('2026-10-04: 02:00 to 02:29 are skipped; 02:30 exists', async () => {
    expectValidationError(await local('Australia/Lord_Howe', '2026-10-04', '02:15', '03:00'), 'local_start_time');
    const after = await local('Australia/Lord_Howe', '2026-10-04', '01:45', '02:30');
    expect(after.status).toBe(200);
    // 01:45 at +10:30 is 15:15Z the day before; 02:30 at +11:00 is 15:30Z.
    expect(after.body.data).toMatchObject({ starts_at: '2026-10-03T15:15:00.000Z', ends_at: '2026-10-03T15:30:00.000Z', local_date: '2026-10-04' });
  });

  it('2026-04-05: 01:30 to 01:59 occur twice; the first occurrence (+11:00) is taken', async () => {
    const repeated = await local('Australia/Lord_Howe', '2026-04-05', '01:45', '03:00');
    expect(repeated.status).toBe(200);
    expect(repeated.body.data).toMatchObject({ starts_at: '2026-04-04T14:45:00.000Z', ends_at: '2026-04-04T16:30:00.000Z', local_start_time: '01:45', local_end_time: '03:00' });
  });
});

describe('time zone changes', () => {
  it('PATCH time_zone alone keeps the instants across a DST boundary; a local update re-reads in the zone', async () => {
    const created = await createVia(app, key, '/visits', { job_uuid: job.uuid, time_zone: 'America/New_York', local_date: '2026-03-09', local_start_time: '09:00', local_end_time: '10:00' });
    expect(created.starts_at).toBe('2026-03-09T13:00:00.000Z');
    const london = await call(app, 'PATCH', `/api/v1/visits/${created.uuid}`, { key, body: { time_zone: 'Europe/London' } });
    expect(london.body.data).toMatchObject({ starts_at: '2026-03-09T13:00:00.000Z', local_start_time: '13:00', local_end_time: '14:00' });
    const gap = await call(app, 'PATCH', `/api/v1/visits/${created.uuid}`, { key, body: { local_date: '2026-03-29', local_start_time: '01:30', local_end_time: '03:00' } });
    expectValidationError(gap, 'local_start_time');
  });
});

describe('names that are not IANA zones', () => {
  const detail = [{ field: 'time_zone', code: 'invalid_format', message: 'must be a valid IANA time zone' }];

  it('refuses the platform-only ids (PST, IST...), SystemV ids, removed names and the abbreviations PostgreSQL reads otherwise (CET)', async () => {
    for (const zone of ['PST', 'IST', 'CST', 'JST', 'AET', 'SystemV/AST4', 'US/Pacific-New', 'CET', 'EET']) {
      const visit = await local(zone, '2029-07-01', '09:00', '10:00');
      expect(visit.status, zone).toBe(400);
      expect(visit.body.error.details, zone).toEqual(detail);
      const availability = await call(app, 'GET', `/api/v1/availability?from=2029-06-01T00:00:00Z&to=2029-06-02T00:00:00Z&duration_minutes=30&time_zone=${encodeURIComponent(zone)}`, { key });
      expect(availability.status, zone).toBe(400);
      expect(availability.body.error.details, zone).toEqual(detail);
      const location = await call(app, 'POST', '/api/v1/locations', { key, body: { name: 'Zone', address1: '1 Main', city: 'Austin', state: 'TX', zip: '78701', timezone: zone } });
      expect(location.status, zone).toBe(400);
      expect(location.body.error.details, zone).toEqual([{ field: 'timezone', code: 'invalid_format', message: 'must be a valid IANA time zone' }]);
    }
  });

  it('accepts IANA names, their aliases and the three-letter names IANA has (UTC, EST), with the same local times in the GET and the list', async () => {
    for (const zone of ['UTC', 'EST', 'Etc/GMT+5', 'US/Pacific', 'Asia/Kolkata']) {
      const visit = await call(app, 'POST', '/api/v1/visits', {
        key,
        body: {
          job_uuid: job.uuid,
          time_zone: zone,
          starts_at: '2029-07-02T16:00:00Z',
          ends_at: '2029-07-02T17:00:00Z',
          assigned_user_ids: [company.userId],
          allow_overlap: true,
        },
      });
      expect(visit.status, zone).toBe(200);
      const got = await call(app, 'GET', `/api/v1/visits/${visit.body.data.uuid}`, { key });
      expect(got.body.data, zone).toEqual(visit.body.data);
      // A technician's window is answered from JSON PostgreSQL writes, with its own zone rules.
      const window = await call(app, 'GET', `/api/v1/visits?assigned_user_id=${company.userId}&from=2029-07-02T16:00:00Z&to=2029-07-02T17:00:00Z&sort=starts_at`, { key });
      const same = window.body.data.visits.find((item: { uuid: string }) => item.uuid === visit.body.data.uuid);
      expect(same, zone).toEqual(visit.body.data);
    }
  });
});
