import { Temporal } from 'temporal-polyfill';

/**
 * Wall-clock times in IANA time zones (DECISIONS §13), with the zone rules of the Temporal polyfill: no
 * offset is ever computed here. Instants are JavaScript Dates; local dates are YYYY-MM-DD and local
 * times HH:MM.
 */

export interface LocalParts {
  /** YYYY-MM-DD */
  date: string;
  /** HH:MM (seconds dropped) */
  time: string;
}


/**
 * The instants the schedule takes (visit times, availability ranges): a day inside the years 1 to 9999 on
 * each side, so that every local date they touch is a YYYY-MM-DD date of the common era in every zone
 * (offsets reach 14 hours).
 */
const SCHEDULE_EARLIEST_MS = Date.parse('0001-01-02T00:00:00Z');
const SCHEDULE_LATEST_MS = Date.parse('9999-12-31T00:00:00Z');
export const SCHEDULE_RANGE_TEXT = 'must be between 0001-01-02 and 9999-12-30 (UTC)';

/** Whether the schedule takes this instant (SCHEDULE_RANGE_TEXT). */
export function inScheduleRange(instant: Date): boolean {
  return instant.getTime() >= SCHEDULE_EARLIEST_MS && instant.getTime() < SCHEDULE_LATEST_MS;
}

/** One formatter per zone: building one costs far more than using it. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      era: 'short',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The numbers of a formatted en-US date and time: month, day, year, hour, minute, whatever separates them. */
const NUMBERS = /\d+/g;

/**
 * The wall-clock date and time of an instant in a zone, from the platform's zone rules (Intl): the
 * direction that never needs disambiguation, and the one every answer takes, so it is the cheap one. The
 * formatted text is read for its numbers, in en-US order; formatToParts would make an object per part.
 */
export function localParts(instant: Date, timeZone: string): LocalParts {
  const [month, day, year, hour, minute] = formatterOf(timeZone).format(instant).match(NUMBERS)!;
  // Years before 1 (era BC) do not occur: timestamps are kept within the years 1..9999.
  return { date: `${year.padStart(4, '0')}-${month}-${day}`, time: `${hour}:${minute}` };
}

/** The local calendar date of an instant in a zone, YYYY-MM-DD. */
export function localDate(instant: Date, timeZone: string): string {
  return Temporal.Instant.fromEpochMilliseconds(instant.getTime()).toZonedDateTimeISO(timeZone).toPlainDate().toString();
}

/** The date `days` after a YYYY-MM-DD date (negative: before). */
export function addDays(date: string, days: number): string {
  return Temporal.PlainDate.from(date).add({ days }).toString();
}

function plainDateTime(date: string, time: string): Temporal.PlainDateTime {
  return Temporal.PlainDateTime.from(`${date}T${time}`);
}

/**
 * The instant a wall-clock date and time denote in a zone: a time that occurs twice (the hour repeated when
 * clocks go back) is its first occurrence; a time that does not occur (skipped when clocks go forward) is
 * null, for the caller to refuse.
 */
export function exactInstant(date: string, time: string, timeZone: string): Date | null {
  const local = plainDateTime(date, time);
  const zoned = local.toZonedDateTime(timeZone, { disambiguation: 'earlier' });
  // In a gap 'earlier' gives another wall-clock time: the one asked for does not exist.
  if (!zoned.toPlainDateTime().equals(local)) return null;
  return new Date(zoned.epochMilliseconds);
}

/**
 * The instant of a wall-clock date and time for a boundary such as the start of working hours: never
 * refused. A skipped time moves forward by the length of the gap (02:30 on a spring-forward night is 03:30),
 * a repeated one is its first occurrence (the 'compatible' rule of RFC 5545 and Temporal).
 */
export function boundaryInstant(date: string, time: string, timeZone: string): Date {
  return new Date(plainDateTime(date, time).toZonedDateTime(timeZone, { disambiguation: 'compatible' }).epochMilliseconds);
}
