import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DETAIL_CODES, type DetailCode } from '../src/errors.js';
import { detail, detailsOf, parseInput } from '../src/shared/validation.js';
import { calendarDate, jsonObject, moneyInput, requiredText, timestampInput, timezoneName, uuidString } from '../src/shared/formats.js';
import { commaSeparatedEnum } from '../src/shared/list-query.js';

/** The details a schema gives for a value, through the one mapping every request part uses. */
function detailsFor(schema: z.ZodType, value: unknown) {
  const result = parseInput(schema, value);
  if (result.success) throw new Error(`expected ${JSON.stringify(value)} to fail`);
  return detailsOf(result.issues, 'body');
}

/** zod's own wording, which never reaches a client. */
const VALIDATOR_TEXT = /Invalid input|Invalid option|Invalid string|Invalid number|expected |received |Too (big|small)|Unrecognized key/;

const body = z.strictObject({
  name: requiredText(10),
  kind: z.enum(['flat', 'tiered']),
  count: z.number().int().min(1).max(5).optional(),
  tags: z.array(z.string()).min(1).optional(),
  email: z.email().optional(),
  id: uuidString.optional(),
  price: moneyInput.optional(),
  flags: jsonObject.optional(),
  on: calendarDate.optional(),
  zone: timezoneName.optional(),
  statuses: commaSeparatedEnum(['New', 'Done'] as const, 'status', ['New']).optional(),
  pair: z.union([z.string(), z.number()]).optional(),
  even: z
    .number()
    .refine((value) => value % 2 === 0, 'must be even')
    .optional(),
});

const base = { name: 'Dana', kind: 'flat' };

/**
 * One case per way zod reports a problem, each with the detail code and message the client gets. The
 * codes of the table cover the closed list but read_only and invalid_reference, which no schema can know
 * (the route decides read_only, the services invalid_reference; test/detail-codes.test.ts has them).
 */
const CASES: Array<[DetailCode, string, unknown, { field: string; message: string | RegExp }]> = [
  ['required', 'an absent string', { kind: 'flat' }, { field: 'name', message: 'is required' }],
  ['required', 'an absent enum (never "Invalid option")', { name: 'Dana' }, { field: 'kind', message: 'is required' }],
  ['required', 'an absent body', undefined, { field: 'body', message: 'is required' }],
  ['empty', 'an empty string', { ...base, name: '' }, { field: 'name', message: 'must not be empty' }],
  ['empty', 'a blank string', { ...base, name: '   ' }, { field: 'name', message: 'must not be empty' }],
  ['empty', 'an empty array', { ...base, tags: [] }, { field: 'tags', message: 'must not be empty' }],
  ['invalid_type', 'a number for a string', { ...base, name: 5 }, { field: 'name', message: 'must be a string' }],
  ['invalid_type', 'null for a string', { ...base, name: null }, { field: 'name', message: 'must be a string, not null' }],
  ['invalid_type', 'a fraction for an integer', { ...base, count: 1.5 }, { field: 'count', message: 'must be an integer' }],
  ['invalid_type', 'a string in an array of strings', { ...base, tags: [1] }, { field: 'tags[0]', message: 'must be a string' }],
  ['invalid_format', 'an email', { ...base, email: 'nope' }, { field: 'email', message: 'must be an email address' }],
  ['invalid_format', 'a uuid', { ...base, id: 'not-a-uuid' }, { field: 'id', message: 'must be a UUID' }],
  ['invalid_format', 'a date that is not on the calendar', { ...base, on: '2026-02-30' }, { field: 'on', message: 'must be a real calendar date' }],
  ['invalid_format', 'the year 0, which has no dates', { ...base, on: '0000-06-01' }, { field: 'on', message: 'must be a real calendar date' }],
  ['invalid_format', 'a time zone', { ...base, zone: 'Mars/Olympus' }, { field: 'zone', message: 'must be a valid IANA time zone' }],
  ['invalid_enum', 'a value not listed', { ...base, kind: 'hourly' }, { field: 'kind', message: 'must be one of: flat, tiered' }],
  ['invalid_enum', 'a comma-separated value not listed', { ...base, statuses: 'New,Lost' }, { field: 'statuses', message: /'Lost'.*allowed: New, Done/ }],
  ['out_of_range', 'too small', { ...base, count: 0 }, { field: 'count', message: 'must be at least 1' }],
  ['out_of_range', 'too large', { ...base, count: 6 }, { field: 'count', message: 'must be at most 5' }],
  ['out_of_range', 'too long', { ...base, name: 'x'.repeat(11) }, { field: 'name', message: 'must be at most 10 characters' }],
  ['out_of_range', 'too many decimals', { ...base, price: 1.005 }, { field: 'price', message: 'must have at most 2 decimal places' }],
  ['out_of_range', 'negative money', { ...base, price: -1 }, { field: 'price', message: 'must not be negative' }],
  ['out_of_range', 'a free-form key too long', { ...base, flags: { ['k'.repeat(256)]: 1 } }, { field: `flags.${'k'.repeat(256)}`, message: 'is a key longer than 255 characters' }],
  ['unknown_field', 'a field the body does not have', { ...base, colour: 'blue' }, { field: 'colour', message: 'is not an accepted field' }],
  ['invalid', 'a refinement without a code', { ...base, even: 3 }, { field: 'even', message: 'must be even' }],
  ['invalid', 'no member of a union', { ...base, pair: true }, { field: 'pair', message: 'matches none of the accepted forms' }],
];

describe('the one mapping from zod issues to detail codes', () => {
  it.each(CASES)('%s: %s', (code, _what, value, expected) => {
    const details = detailsFor(body, value);
    expect(details).toEqual([{ field: expected.field, code, message: expect.stringMatching(expected.message instanceof RegExp ? expected.message : `^${expected.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }]);
    expect(details[0].message).not.toMatch(VALIDATOR_TEXT);
  });

  it('covers every detail code a schema can raise', () => {
    const covered = new Set(CASES.map(([code]) => code));
    expect([...covered].sort()).toEqual(DETAIL_CODES.filter((code) => code !== 'read_only' && code !== 'invalid_reference').sort());
  });

  it('lets a refinement choose its code', () => {
    const schema = z.string().refine(() => false, { message: 'is not a plate number', params: detail('invalid_format') });
    expect(detailsFor(z.object({ plate: schema }), { plate: 'x' })).toEqual([
      { field: 'plate', code: 'invalid_format', message: 'is not a plate number' },
    ]);
  });

  it('reports one item per problem of a field: a bad uuid once, whatever its length', () => {
    for (const id of ['x', 'x'.repeat(300), '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f7z']) {
      expect(detailsFor(z.object({ uuid: uuidString }), { uuid: id })).toEqual([{ field: 'uuid', code: 'invalid_format', message: 'must be a UUID' }]);
    }
  });

  it('names every unknown key, each once', () => {
    expect(detailsFor(body, { ...base, a: 1, b: 2 })).toEqual([
      { field: 'a', code: 'unknown_field', message: 'is not an accepted field' },
      { field: 'b', code: 'unknown_field', message: 'is not an accepted field' },
    ]);
  });

  it('writes nested paths as a.b[0].c', () => {
    const nested = z.object({ items: z.array(z.object({ qty: z.number() })) });
    expect(detailsFor(nested, { items: [{ qty: 1 }, { qty: 'x' }] })).toEqual([
      { field: 'items[1].qty', code: 'invalid_type', message: 'must be a number' },
    ]);
  });
});

describe('dates (DECISIONS §4: real calendar dates)', () => {
  it('takes the years 1 to 99 as written (Date.UTC would read them as 1900 to 1999) and leap days only in leap years', () => {
    for (const text of ['0001-01-01', '0050-01-01', '0099-12-31', '0004-02-29', '2000-02-29', '9999-12-31']) {
      expect(parseInput(calendarDate, text).success, text).toBe(true);
    }
    for (const text of ['0000-01-01', '0050-02-29', '1900-02-29', '2026-04-31']) {
      expect(parseInput(calendarDate, text).success, text).toBe(false);
    }
  });
});

describe('timestamps (DECISIONS §4: ISO 8601 with Z or an offset)', () => {
  it("takes ISO 8601's extended forms: without seconds, offsets of +HH and +HHMM, a lower-case t or z", () => {
    const cases: Array<[string, string]> = [
      ['2027-09-01T09:00:00Z', '2027-09-01T09:00:00.000Z'],
      ['2027-09-01T09:00-05:00', '2027-09-01T14:00:00.000Z'],
      ['2027-09-01T09:00Z', '2027-09-01T09:00:00.000Z'],
      ['2027-09-01T14:00:00+05', '2027-09-01T09:00:00.000Z'],
      ['2027-09-01T14:00:00+0530', '2027-09-01T08:30:00.000Z'],
      ['2027-09-01T14:00:00.25+05:30', '2027-09-01T08:30:00.250Z'],
      ['2027-09-01t09:00:00z', '2027-09-01T09:00:00.000Z'],
    ];
    for (const [text, instant] of cases) {
      const parsed = parseInput(timestampInput, text);
      expect(parsed.success, text).toBe(true);
      if (parsed.success) expect((parsed.data as Date).toISOString(), text).toBe(instant);
    }
  });

  it('refuses a timestamp without an offset, other separators and impossible values, as one invalid_format', () => {
    for (const text of ['2027-09-01T09:00:00', '2027-09-01 09:00:00Z', '2027-09-01T25:00Z', '2027-13-01T09:00Z', '2027-09-01T09:00:00+5', '2027-09-01T09Z', 'tomorrow']) {
      const result = parseInput(timestampInput, text);
      expect(result.success, text).toBe(false);
      if (!result.success) expect(detailsOf(result.issues, 'at').map((item) => item.code), text).toEqual(['invalid_format']);
    }
  });
});
