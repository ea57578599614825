import { Temporal } from 'temporal-polyfill';
import { describe, expect, it } from 'vitest';
import { localParts } from '../src/shared/wall-clock.js';

/** The wall-clock date and time of an instant by the Temporal polyfill's zone rules: the reference. */
function reference(instant: Date, timeZone: string) {
  const zoned = Temporal.Instant.fromEpochMilliseconds(instant.getTime()).toZonedDateTimeISO(timeZone);
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return { date: `${pad(zoned.year, 4)}-${pad(zoned.month)}-${pad(zoned.day)}`, time: `${pad(zoned.hour)}:${pad(zoned.minute)}` };
}

describe('localParts', () => {
  const zones = ['UTC', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham', 'America/St_Johns', 'Europe/London'];

  it('gives the date and time of every quarter hour around daylight-saving changes as Temporal does', () => {
    const starts = [Date.UTC(2026, 2, 7), Date.UTC(2026, 9, 31), Date.UTC(2026, 3, 4), Date.UTC(2026, 9, 3), Date.UTC(2026, 11, 31, 20)];
    for (const timeZone of zones) {
      for (const start of starts) {
        for (let step = 0; step < 4 * 48; step++) {
          const instant = new Date(start + step * 15 * 60_000 + 59_999);
          expect(localParts(instant, timeZone), `${instant.toISOString()} in ${timeZone}`).toEqual(reference(instant, timeZone));
        }
      }
    }
  });

  it('pads the years before 1000 to four digits and keeps midnight as 00:00', () => {
    expect(localParts(new Date('0001-01-01T12:00:00Z'), 'UTC')).toEqual({ date: '0001-01-01', time: '12:00' });
    expect(localParts(new Date('0999-06-15T00:00:00Z'), 'UTC')).toEqual({ date: '0999-06-15', time: '00:00' });
    expect(localParts(new Date('9999-12-31T23:59:59Z'), 'UTC')).toEqual({ date: '9999-12-31', time: '23:59' });
    expect(localParts(new Date('2026-11-01T04:00:00Z'), 'America/New_York')).toEqual({ date: '2026-11-01', time: '00:00' });
  });
});
