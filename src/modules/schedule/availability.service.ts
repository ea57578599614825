import type { Db } from '../../db/client.js';
import { invalidField, validationError } from '../../errors.js';
import { addDays, boundaryInstant, inScheduleRange, localParts, SCHEDULE_RANGE_TEXT } from '../../shared/wall-clock.js';
import { availabilityInputs } from './availability.repository.js';
import { MAX_AVAILABILITY_DAYS, MAX_AVAILABILITY_USERS, type AvailabilityQuery, type AvailabilityResponse } from './availability.schemas.js';
import { freeSlots, type Interval } from './free-slots.js';

const DEFAULT_TIME_ZONE = 'America/New_York';
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The working hours of every local date that touches [from, to), as instants: each local date's day_start
 * to day_end in the zone, so a day of 23 or 25 hours keeps its wall-clock hours. A boundary the zone
 * skips moves forward by the gap; a repeated one is its first occurrence.
 */
export function workingWindows(from: Date, to: Date, timeZone: string, dayStart: string, dayEnd: string): readonly Interval[] {
  // The local dates are a function of the instants and the zone: the instants key the windows.
  const key = `${timeZone} ${dayStart} ${dayEnd} ${from.getTime()} ${to.getTime()}`;
  const known = windowsKept.get(key);
  if (known) return known;
  const first = addDays(localParts(from, timeZone).date, -1);
  const last = localParts(to, timeZone).date;
  const windows: Interval[] = [];
  // Bounded by count as well as by date: the range is at most MAX_AVAILABILITY_DAYS, plus the day before.
  for (let date = first, days = 0; date <= last && days <= MAX_AVAILABILITY_DAYS + 2; date = addDays(date, 1), days++) {
    windows.push({ start: boundaryInstant(date, dayStart, timeZone).getTime(), end: boundaryInstant(date, dayEnd, timeZone).getTime() });
  }
  if (windowsKept.size >= WINDOWS_KEPT) windowsKept.delete(windowsKept.keys().next().value!);
  windowsKept.set(key, windows);
  return windows;
}

/**
 * Working windows go through the zone rules (the Temporal polyfill, slow) once per zone, hours and range,
 * then are kept (never changed: freeSlots makes new intervals); a bounded number, the
 * oldest dropped first.
 */
const windowsKept = new Map<string, readonly Interval[]>();
const WINDOWS_KEPT = 5_000;

/**
 * Free slots per user (DECISIONS §13): the working hours inside [from, to) minus every hold (live visits
 * that hold their users, and time off). The users, the zone and all the holds come in one statement; the
 * arithmetic is free-slots.ts.
 */
export async function availability(db: Db, companyId: string, query: AvailabilityQuery): Promise<AvailabilityResponse> {
  for (const field of ['from', 'to'] as const) {
    if (!inScheduleRange(query[field])) throw invalidField(field, SCHEDULE_RANGE_TEXT, 'out_of_range');
  }
  if (query.to <= query.from) throw invalidField('to', 'must be after from');
  if (query.to.getTime() - query.from.getTime() > MAX_AVAILABILITY_DAYS * DAY_MS) {
    throw invalidField('to', `must be at most ${MAX_AVAILABILITY_DAYS} days after from`, 'out_of_range');
  }
  if (query.day_end <= query.day_start) throw invalidField('day_end', 'must be later than day_start');
  const inputs = await availabilityInputs(db, companyId, query.user_ids, MAX_AVAILABILITY_USERS, query.from, query.to);
  let userIds = inputs.userIds;
  if (query.user_ids) {
    const live = new Set(userIds);
    const missing = query.user_ids.filter((id) => !live.has(id));
    if (missing.length > 0) {
      throw validationError([{ field: 'user_ids', code: 'invalid_reference', message: `has ${missing.join(', ')}, not a user of this company` }], 'query');
    }
    userIds = query.user_ids;
  }
  const timeZone = query.time_zone ?? inputs.primaryTimeZone ?? DEFAULT_TIME_ZONE;
  const bounds = { start: query.from.getTime(), end: query.to.getTime() };
  const windows = workingWindows(query.from, query.to, timeZone, query.day_start, query.day_end);
  const busy = new Map<string, Interval[]>(userIds.map((id) => [id, []]));
  for (const hold of inputs.holds) busy.get(hold.userId)?.push({ start: hold.start, end: hold.end });
  const minimum = query.duration_minutes * 60_000;
  // Users share most slot boundaries (the working hours): each instant's text is made once.
  const texts = new Map<number, string>();
  const text = (instant: number) => {
    let known = texts.get(instant);
    if (known === undefined) {
      known = new Date(instant).toISOString();
      texts.set(instant, known);
    }
    return known;
  };
  return {
    availability: userIds.map((userId) => ({
      user_id: userId,
      slots: freeSlots(windows, busy.get(userId) ?? [], bounds, minimum).map((slot) => ({ starts_at: text(slot.start), ends_at: text(slot.end) })),
    })),
  };
}
