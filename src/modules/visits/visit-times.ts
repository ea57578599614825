import { invalidField, validationError, type ErrorDetail } from '../../errors.js';
import { exactInstant, inScheduleRange, SCHEDULE_RANGE_TEXT } from '../../shared/wall-clock.js';
import { MAX_VISIT_MS } from '../schedule/holds.repository.js';


/** The time fields of a create or update body, as validated. */
export interface TimeInput {
  starts_at?: Date;
  ends_at?: Date;
  local_date?: string;
  local_start_time?: string;
  local_end_time?: string;
}

const INSTANT_FIELDS = ['starts_at', 'ends_at'] as const;
const LOCAL_FIELDS = ['local_date', 'local_start_time', 'local_end_time'] as const;

export interface Interval {
  startsAt: Date;
  endsAt: Date;
}

/**
 * The interval a body asks for, in either form (DECISIONS §13), or null when it sends no time field (an
 * update that keeps the times; a create is refused). Both forms at once or part of one is 400; a local
 * time that the zone skips is 400 naming it, one it repeats is its first occurrence. The end must be after
 * the start and at most 24 hours later.
 */
export function requestedInterval(body: TimeInput, timeZone: string, options: { required: boolean }): Interval | null {
  const instants = INSTANT_FIELDS.filter((field) => body[field] !== undefined);
  const locals = LOCAL_FIELDS.filter((field) => body[field] !== undefined);
  if (instants.length > 0 && locals.length > 0) {
    throw validationError(
      locals.map((field) => ({ field, code: 'invalid', message: 'cannot be sent with starts_at or ends_at: send one time form, not both' })),
      'body',
    );
  }
  if (instants.length === 0 && locals.length === 0) {
    if (!options.required) return null;
    throw validationError(
      INSTANT_FIELDS.map((field) => ({ field, code: 'required', message: 'is required (or local_date, local_start_time and local_end_time)' })),
      'body',
    );
  }
  const form = instants.length > 0 ? INSTANT_FIELDS : LOCAL_FIELDS;
  const missing: ErrorDetail[] = form
    .filter((field) => body[field] === undefined)
    .map((field) => ({ field, code: 'required', message: `is required with ${form.filter((other) => body[other] !== undefined).join(' and ')}` }));
  if (missing.length > 0) throw validationError(missing, 'body');

  if (instants.length > 0) return checkedInterval(body.starts_at as Date, body.ends_at as Date, 'ends_at', 'starts_at');

  const date = body.local_date as string;
  const start = body.local_start_time as string;
  const end = body.local_end_time as string;
  if (end <= start) throw invalidField('local_end_time', 'must be later than local_start_time on the same day');
  const startsAt = exactInstant(date, start, timeZone);
  if (!startsAt) throw skipped('local_start_time', date, start, timeZone);
  const endsAt = exactInstant(date, end, timeZone);
  if (!endsAt) throw skipped('local_end_time', date, end, timeZone);
  return checkedInterval(startsAt, endsAt, 'local_end_time', 'local_start_time');
}

function skipped(field: string, date: string, time: string, timeZone: string) {
  return invalidField(field, `does not exist: ${date} ${time} is skipped by a daylight-saving change in ${timeZone}`);
}

function checkedInterval(startsAt: Date, endsAt: Date, endField: string, startField: string): Interval {
  for (const [field, instant] of [[startField, startsAt], [endField, endsAt]] as const) {
    if (!inScheduleRange(instant)) throw invalidField(field, SCHEDULE_RANGE_TEXT, 'out_of_range');
  }
  if (endsAt.getTime() <= startsAt.getTime()) throw invalidField(endField, `must be after ${startField}`);
  if (endsAt.getTime() - startsAt.getTime() > MAX_VISIT_MS) {
    throw invalidField(endField, `must be at most 24 hours after ${startField}`, 'out_of_range');
  }
  return { startsAt, endsAt };
}
