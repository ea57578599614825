import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clipIntervals, freeSlots, mergeIntervals, subtractIntervals, type Interval } from '../src/modules/schedule/free-slots.js';
import { buildTestApp, call } from './helpers/app.js';
import { expectValidationError } from './helpers/conventions.js';
import { createVia, makeCompany, makeCustomer, makeLocation, makeUser } from './helpers/factories.js';

const I = (start: number, end: number): Interval => ({ start, end });

describe('free-slots (pure interval arithmetic)', () => {
  it('merges overlapping and touching intervals, drops empty ones', () => {
    expect(mergeIntervals([I(5, 7), I(1, 3), I(3, 4), I(6, 9), I(10, 10)])).toEqual([I(1, 4), I(5, 9)]);
  });

  it('clips windows to bounds', () => {
    expect(clipIntervals([I(0, 5), I(8, 12), I(20, 30)], I(3, 10))).toEqual([I(3, 5), I(8, 10)]);
  });

  it('subtracts busy time, half-open: a hold ending where a window starts takes nothing', () => {
    expect(subtractIntervals([I(0, 10)], [I(2, 3), I(5, 7)])).toEqual([I(0, 2), I(3, 5), I(7, 10)]);
    expect(subtractIntervals([I(0, 10)], [I(-5, 0), I(10, 15)])).toEqual([I(0, 10)]);
    expect(subtractIntervals([I(0, 10)], [I(-5, 20)])).toEqual([]);
    expect(subtractIntervals([I(0, 4), I(6, 10)], [I(3, 7)])).toEqual([I(0, 3), I(7, 10)]);
    expect(subtractIntervals([I(0, 4), I(6, 10), I(12, 14)], [I(1, 2), I(13, 20)])).toEqual([I(0, 1), I(2, 4), I(6, 10), I(12, 13)]);
  });

  it('keeps slots of at least the duration, touching windows joined', () => {
    expect(freeSlots([I(0, 10), I(10, 20)], [I(4, 5), I(18, 30)], I(0, 100), 5)).toEqual([I(5, 18)]);
    expect(freeSlots([I(0, 10)], [I(4, 5)], I(0, 100), 4)).toEqual([I(0, 4), I(5, 10)]);
    expect(freeSlots([I(0, 10)], [], I(2, 8), 1)).toEqual([I(2, 8)]);
  });

  it('agrees with a minute-by-minute model', () => {
    const interval = fc.tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 20 })).map(([start, length]) => I(start, start + length));
    fc.assert(
      fc.property(fc.array(interval, { maxLength: 6 }), fc.array(interval, { maxLength: 6 }), fc.integer({ min: 1, max: 10 }), (windows, busy, minimum) => {
        const bounds = I(5, 70);
        const free = (t: number) => t >= bounds.start && t < bounds.end && windows.some((w) => t >= w.start && t < w.end) && !busy.some((b) => t >= b.start && t < b.end);
        const expected: Interval[] = [];
        for (let t = 0; t < 100; t++) {
          if (!free(t)) continue;
          const last = expected[expected.length - 1];
          if (last && last.end === t) last.end = t + 1;
          else expected.push(I(t, t + 1));
        }
        expect(freeSlots(windows, busy, bounds, minimum)).toEqual(expected.filter((slot) => slot.end - slot.start >= minimum));
      }),
    );
  });
});

const ctx = await buildTestApp();
const { app } = ctx;

describe('GET /api/v1/availability', () => {
  it('answers working hours minus visits and time off, per user in the order asked, around a DST change', async () => {
    const company = await makeCompany(ctx.database);
    const { key } = company;
    await makeLocation(app, key, { timezone: 'America/New_York', is_primary: true });
    const a = await makeUser(ctx.database, company.companyId, 'Ana', 'A');
    const b = await makeUser(ctx.database, company.companyId, 'Ben', 'B');
    const customer = await makeCustomer(app, key);
    const job = await createVia(app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Work' });
    // Saturday 2026-03-07 (EST) 10:00-12:00 for a; Sunday 2026-03-08 (EDT) 09:00-10:00 for both.
    await createVia(app, key, '/visits', { job_uuid: job.uuid, local_date: '2026-03-07', local_start_time: '10:00', local_end_time: '12:00', assigned_user_ids: [a] });
    await createVia(app, key, '/visits', { job_uuid: job.uuid, local_date: '2026-03-08', local_start_time: '09:00', local_end_time: '10:00', assigned_user_ids: [a, b] });
    // A cancelled visit and an allow_overlap one hold no one.
    await createVia(app, key, '/visits', { job_uuid: job.uuid, local_date: '2026-03-08', local_start_time: '13:00', local_end_time: '14:00', assigned_user_ids: [b], status: 'Cancelled' });
    await createVia(app, key, '/visits', { job_uuid: job.uuid, local_date: '2026-03-08', local_start_time: '13:00', local_end_time: '14:00', assigned_user_ids: [b], allow_overlap: true });
    await createVia(app, key, '/time_off', { user_id: b, starts_at: '2026-03-07T00:00:00-05:00', ends_at: '2026-03-08T00:00:00-05:00' });
    const response = await call(app, 'GET', `/api/v1/availability?from=2026-03-07T00:00:00Z&to=2026-03-09T05:00:00Z&duration_minutes=60&user_ids=${b},${a}`, { key });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.availability).toEqual([
      {
        user_id: b,
        slots: [
          // 08:00-17:00 EDT on the 8th is 12:00Z-21:00Z; the visit 09:00-10:00 is 13:00Z-14:00Z.
          { starts_at: '2026-03-08T12:00:00.000Z', ends_at: '2026-03-08T13:00:00.000Z' },
          { starts_at: '2026-03-08T14:00:00.000Z', ends_at: '2026-03-08T21:00:00.000Z' },
        ],
      },
      {
        user_id: a,
        slots: [
          // 08:00-17:00 EST on the 7th is 13:00Z-22:00Z; the visit 10:00-12:00 is 15:00Z-17:00Z.
          { starts_at: '2026-03-07T13:00:00.000Z', ends_at: '2026-03-07T15:00:00.000Z' },
          { starts_at: '2026-03-07T17:00:00.000Z', ends_at: '2026-03-07T22:00:00.000Z' },
          { starts_at: '2026-03-08T12:00:00.000Z', ends_at: '2026-03-08T13:00:00.000Z' },
          { starts_at: '2026-03-08T14:00:00.000Z', ends_at: '2026-03-08T21:00:00.000Z' },
        ],
      },
    ]);
    // The duration drops short slots; the range clips the working hours; the default is every user.
    const long = await call(app, 'GET', '/api/v1/availability?from=2026-03-08T13:30:00Z&to=2026-03-08T20:00:00Z&duration_minutes=120', { key });
    const byUser = Object.fromEntries(long.body.data.availability.map((entry: { user_id: string; slots: unknown[] }) => [entry.user_id, entry.slots]));
    expect(Object.keys(byUser).sort()).toEqual([company.userId, a, b].sort());
    expect(byUser[a]).toEqual([{ starts_at: '2026-03-08T14:00:00.000Z', ends_at: '2026-03-08T20:00:00.000Z' }]);
    expect(byUser[company.userId]).toEqual([{ starts_at: '2026-03-08T13:30:00.000Z', ends_at: '2026-03-08T20:00:00.000Z' }]);
    // Working hours in another zone, and custom hours.
    const tokyo = await call(app, 'GET', `/api/v1/availability?from=2026-03-08T00:00:00Z&to=2026-03-09T00:00:00Z&duration_minutes=30&user_ids=${a}&time_zone=Asia/Tokyo&day_start=09:00&day_end=12:00`, { key });
    expect(tokyo.body.data.availability[0].slots).toEqual([{ starts_at: '2026-03-08T00:00:00.000Z', ends_at: '2026-03-08T03:00:00.000Z' }]);
  });

  it('validates every parameter', async () => {
    const company = await makeCompany(ctx.database);
    const other = await makeCompany(ctx.database);
    const base = 'from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z&duration_minutes=30';
    const cases: Array<[string, string]> = [
      ['to=2026-03-02T00:00:00Z&duration_minutes=30', 'from'],
      ['from=2026-03-01T00:00:00Z&duration_minutes=30', 'to'],
      ['from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z', 'duration_minutes'],
      ['from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z&duration_minutes=30', 'to'],
      ['from=2026-03-01T00:00:00Z&to=2026-04-01T00:00:01Z&duration_minutes=30', 'to'],
      [`${base.replace('30', '4')}`, 'duration_minutes'],
      [`${base.replace('30', '1441')}`, 'duration_minutes'],
      [`${base.replace('30', '7.5')}`, 'duration_minutes'],
      [`${base}&user_ids=nope`, 'user_ids'],
      [`${base}&user_ids=${other.userId}`, 'user_ids'],
      [`${base}&user_ids=${Array.from({ length: 101 }, (_, i) => `019a4c1e-7c2b-7d3e-9f10-${String(i).padStart(12, '0')}`).join(',')}`, 'user_ids'],
      [`${base}&time_zone=Nowhere/Land`, 'time_zone'],
      [`${base}&day_start=8:00`, 'day_start'],
      [`${base}&day_start=17:00&day_end=08:00`, 'day_end'],
      [`${base}&extra=1`, 'extra'],
    ];
    for (const [query, field] of cases) expectValidationError(await call(app, 'GET', `/api/v1/availability?${query}`, { key: company.key }), field);
    // The detail codes: absent is required, not digits is invalid_type, a repeated user is invalid.
    const codeOf = async (query: string) => (await call(app, 'GET', `/api/v1/availability?${query}`, { key: company.key })).body.error.details[0].code;
    expect(await codeOf('from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z')).toBe('required');
    expect(await codeOf(base.replace('30', '6e1'))).toBe('invalid_type');
    expect(await codeOf(base.replace('30', '1441'))).toBe('out_of_range');
    expect(await codeOf(`${base}&user_ids=${company.userId},${company.userId}`)).toBe('invalid');
    // 31 days exactly is fine.
    expect((await call(app, 'GET', '/api/v1/availability?from=2026-03-01T00:00:00Z&to=2026-04-01T00:00:00Z&duration_minutes=30', { key: company.key })).status).toBe(200);
  });

  it('takes ranges inside the years 1 to 9999 in every zone, like visit times: outside is 400 out_of_range, the edges answer', { timeout: 20_000 }, async () => {
    const company = await makeCompany(ctx.database);
    const user = company.userId;
    const query = (from: string, to: string, zone = 'America/New_York') =>
      call(app, 'GET', `/api/v1/availability?from=${from}&to=${to}&duration_minutes=60&user_ids=${user}&time_zone=${zone}`, { key: company.key });
    // A last local date of 9999-12-31 once sent the day loop past year 9999 without end.
    for (const [from, to, field] of [
      ['9999-12-30T00:00:00Z', '9999-12-31T23:00:00Z', 'to'],
      ['0001-01-01T00:00:00Z', '0001-01-03T00:00:00Z', 'from'],
    ] as const) {
      const refused = await query(from, to);
      expectValidationError(refused, field);
      expect(refused.body.error.details[0]).toMatchObject({ code: 'out_of_range', message: expect.stringContaining('0001-01-02 and 9999-12-30') });
    }
    // The first and the last days the schedule takes, in the zones furthest behind and ahead of UTC.
    const first = await query('0001-01-02T00:00:00Z', '0001-01-04T00:00:00Z');
    expect(first.status).toBe(200);
    expect(first.body.data.availability[0].slots).toHaveLength(2);
    for (const zone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago']) {
      const last = await query('9999-12-29T00:00:00Z', '9999-12-30T23:59:59Z', zone);
      expect(last.status, JSON.stringify(last.body)).toBe(200);
      expect(last.body.data.availability[0].slots.length).toBeGreaterThanOrEqual(1);
    }
  });
});
