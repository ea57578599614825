import { z } from 'zod';
import { decimalPlaces, MAX_CENTS } from './money.js';
import { detail } from './validation.js';

/** Reusable zod pieces for the field formats of DECISIONS.md §4. */

/** One check, so a bad id is one problem (the pattern fixes the length, which the document states). */
/** What uuidString accepts, in any case (it answers the value lower-cased). */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const uuidString = z
  .string()
  .regex(UUID_PATTERN, 'must be a UUID')
  .transform((value) => value.toLowerCase())
  .meta({ format: 'uuid', minLength: 36, maxLength: 36, example: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70' });

export const US_STATES = [
  'AL', 'AK', 'AZ', 'AR', 'CA', 'CO', 'CT', 'DE', 'FL', 'GA', 'HI', 'ID', 'IL', 'IN', 'IA', 'KS', 'KY',
  'LA', 'ME', 'MD', 'MA', 'MI', 'MN', 'MS', 'MO', 'MT', 'NE', 'NV', 'NH', 'NJ', 'NM', 'NY', 'NC', 'ND',
  'OH', 'OK', 'OR', 'PA', 'RI', 'SC', 'SD', 'TN', 'TX', 'UT', 'VT', 'VA', 'WA', 'WV', 'WI', 'WY',
  'DC', 'AS', 'GU', 'MP', 'PR', 'VI', 'UM',
] as const;

export const usState = z
  .enum(US_STATES, { error: 'must be a 2-letter upper-case US state, DC or territory code' })
  .meta({ id: 'UsState', description: 'A US state, DC or territory: its 2-letter upper-case code.', example: 'TX' });

/**
 * A string of a fixed pattern, one problem when it does not match (invalid_format); the pattern bounds its
 * length, which maxLength states for the document.
 */
export function patterned(pattern: RegExp, maxLength: number, message: string) {
  return z.string().regex(pattern, { message, abort: true }).max(maxLength, message);
}

export const zipCode = patterned(/^\d{5}(?:-?\d{4})?$/, 10, 'must be 12345, 12345-6789 or 123456789').meta({ example: '78701' });

export const phoneNumber = patterned(/^\d{3}-\d{3}-\d{4}$/, 12, 'must be xxx-xxx-xxxx').meta({ example: '512-555-0142' });

export const emailAddress = z.email('must be an email address').max(254, 'must be at most 254 characters').meta({ example: 'ops@example.com' });

export const calendarDate = patterned(/^\d{4}-\d{2}-\d{2}$/, 10, 'must be a YYYY-MM-DD date')
  .refine((value) => {
    const [year, month, day] = value.split('-').map(Number);
    // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
    const date = new Date(0);
    date.setUTCFullYear(year, month - 1, day);
    // PostgreSQL has no year 0.
    return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  }, { message: 'must be a real calendar date', params: detail('invalid_format') })
  .meta({ format: 'date', example: '2026-12-01' });

export const timeOfDay = patterned(/^(?:[01]\d|2[0-3]):[0-5]\d$/, 5, 'must be HH:MM between 00:00 and 23:59').meta({ example: '09:30' });

/**
 * ISO 8601's extended forms that RFC 3339 leaves out (no seconds, an offset of +HH or +HHMM), written the
 * RFC 3339 way; any other text is left as it is, for the check to refuse. A space where a positive offset's
 * sign goes reads as +: an unencoded + in a query string (`from=2026-03-08T00:00:00+01:00`) arrives as a space.
 */
const ISO_EXTENDED = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?([Zz]|[+ -]\d{2}(?::?\d{2})?)$/;
export function rfc3339Form(value: string): string {
  const match = ISO_EXTENDED.exec(value);
  if (!match) return value;
  const [, date, minutes, seconds = ':00', signed] = match;
  const offset = signed.startsWith(' ') ? `+${signed.slice(1)}` : signed;
  const zone = /^[Zz]$/.test(offset) ? 'Z' : offset.length === 3 ? `${offset}:00` : offset.length === 5 ? `${offset.slice(0, 3)}:${offset.slice(3)}` : offset;
  return `${date}T${minutes}${seconds}${zone}`;
}

/** ISO 8601 timestamp with Z or an offset (seconds and the offset's minutes may be left out); parsed to a Date. */
export const timestampInput = z
  .string()
  .max(64, 'must be an ISO 8601 timestamp with Z or an offset')
  .transform(rfc3339Form)
  .pipe(z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp with Z or an offset' }))
  .transform((value) => new Date(value))
  .refine((date) => {
    // PostgreSQL's timestamptz takes what JavaScript does, but years outside 1..9999 do not print back as ISO 8601.
    const year = date.getUTCFullYear();
    return !Number.isNaN(date.getTime()) && year >= 1 && year <= 9999;
  }, { message: 'must be a valid timestamp between the years 1 and 9999', params: detail('out_of_range') })
  .meta({ format: 'date-time', example: '2026-11-22T14:05:09.123Z' });

/** A string the API may return as null. */
export const nullableString = z.string().nullable();

export const timestampOutput = z.string().meta({ format: 'date-time', example: '2026-11-22T14:05:09.123Z' });

/**
 * Names the platform's time zone data (ICU) accepts that are not IANA zones: its three-letter ids (PST, IST,
 * CST...), its SystemV ids and names IANA removed. IANA's own three-letter names are kept, but for CET, EET,
 * MET and WET, which PostgreSQL reads as fixed-offset abbreviations while ICU applies summer time: local
 * times computed by either must agree.
 */
const NOT_IANA = /^(?:(?!(?:EST|GMT|HST|MST|PRC|ROC|ROK|UCT|UTC)$)[A-Z]{3}|SystemV\/.*|US\/Pacific-New|Canada\/East-Saskatchewan)$/;

/** Names found valid so far: a formatter costs tens of microseconds to make, and there are a few hundred zones. */
const knownZones = new Set<string>();

export const timezoneName = z
  .string()
  .min(1)
  .max(64)
  .refine((value) => {
    // IANA names are case-sensitive (America/New_York); Intl alone would also accept america/new_york.
    if (knownZones.has(value)) return true;
    if (!/^[A-Z][A-Za-z0-9_+-]*(?:\/[A-Z0-9][A-Za-z0-9_+-]*)*$/.test(value) || NOT_IANA.test(value)) return false;
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: value });
    } catch {
      return false;
    }
    knownZones.add(value);
    return true;
  }, { message: 'must be a valid IANA time zone', params: detail('invalid_format') })
  .meta({ example: 'America/Chicago' });

/*
 * Numeric rules are zod checks that the OpenAPI document shows as schema keywords (minimum, exclusiveMinimum,
 * maximum; multipleOf as x-decimal-places): the validation and the documentation are one source. zod's multipleOf compares the
 * quotient with a tolerance, so a decimal such as 19.99 is a multiple of 0.01 and 1.005 is not.
 */
const MAX_MONEY = MAX_CENTS / 100;

/**
 * The tolerance lets through binary noise such as 0.30000000000000004 or 5e-324; the exact decimal text
 * decides those, only when every other check passed, so a value gets one message per broken rule.
 */
function exactDecimals<T extends z.ZodNumber>(schema: T, places: number, message: string) {
  return schema.refine(
    (value) => {
      try {
        return decimalPlaces(value) <= places;
      } catch {
        return false;
      }
    },
    { message, when: (payload) => payload.issues.length === 0, params: detail('out_of_range') },
  );
}

/** Money input: never negative, at most 2 decimals, within numeric(12,2). */
export const moneyInput = exactDecimals(
  z
    .number()
    .min(0, 'must not be negative')
    .max(MAX_MONEY, 'is too large')
    .multipleOf(0.01, 'must have at most 2 decimal places'),
  2,
  'must have at most 2 decimal places',
)
  .meta({ example: 149.99 });

/** Money that must be above zero (a payment's amount): greater than 0, at most 2 decimals. */
export const positiveMoneyInput = exactDecimals(
  z
    .number()
    .gt(0, 'must be greater than 0')
    .max(MAX_MONEY, 'is too large')
    .multipleOf(0.01, 'must have at most 2 decimal places'),
  2,
  'must have at most 2 decimal places',
)
  .meta({ example: 30 });

/** Quantity: greater than 0, at most 3 decimals. */
export const quantityInput = exactDecimals(
  z
    .number()
    .gt(0, 'must be greater than 0')
    .max(999_999_999, 'is too large')
    .multipleOf(0.001, 'must have at most 3 decimal places'),
  3,
  'must have at most 3 decimal places',
)
  .meta({ example: 1 });

/** Percent rate: 0..100 with at most 4 decimals. */
export const percentInput = exactDecimals(
  z
    .number()
    .min(0, 'must not be negative')
    .max(100, 'must be at most 100')
    .multipleOf(0.0001, 'must have at most 4 decimal places'),
  4,
  'must have at most 4 decimal places',
)
  .meta({ example: 8.25 });

/** A share in percent: greater than 0, at most 100, at most 4 decimals. */
export const positivePercentInput = exactDecimals(
  z
    .number()
    .gt(0, 'must be greater than 0')
    .max(100, 'must be at most 100')
    .multipleOf(0.0001, 'must have at most 4 decimal places'),
  4,
  'must have at most 4 decimal places',
)
  .meta({ example: 33.3333 });

/** Free-form objects nest at most this deep (DECISIONS.md §4); the object itself is level 1. */
export const FREE_FORM_MAX_DEPTH = 32;
/** ...and are at most this large as JSON, so a stored object stays a small part of its record. */
export const FREE_FORM_MAX_CHARS = 65_536;

/**
 * The depth of a JSON value, walked without recursion and stopped once past `limit`, so a value nested
 * thousands of levels deep is measured without overflowing the stack (serialising it would).
 */
function depthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/**
 * Every free-form object field of the API (business_hours, default_tax_rules, service_types_offered,
 * internal_flags, payment_details, ...) is this one schema: bounded in depth and size in one place.
 */
export const jsonObject = z
  .record(z.string().max(255, 'is a key longer than 255 characters'), z.unknown())
  .superRefine((value, context) => {
    if (depthExceeds(value, FREE_FORM_MAX_DEPTH)) {
      context.addIssue({ code: 'custom', message: `must nest at most ${FREE_FORM_MAX_DEPTH} levels deep`, params: detail('out_of_range') });
      return;
    }
    if (JSON.stringify(value).length > FREE_FORM_MAX_CHARS) {
      context.addIssue({ code: 'custom', message: `must be at most ${FREE_FORM_MAX_CHARS} characters as JSON`, params: detail('out_of_range') });
    }
  })
  .meta({
    type: 'object',
    additionalProperties: true,
    description: `Free-form JSON object: at most ${FREE_FORM_MAX_DEPTH} levels deep and ${FREE_FORM_MAX_CHARS} characters as JSON.`,
    example: { note: 'free-form' },
  });

export const shortText = (max = 255) => z.string().max(max, `must be at most ${max} characters`);
/** Text that must have a visible character: "" or blanks are `empty` (an absent field is `required`). */
export const requiredText = (max = 255) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);
export const longText = (max = 10_000) => z.string().max(max, `must be at most ${max} characters`);

/** A money amount in an answer: a JSON number with at most 2 decimals (made from integer cents). */
export const moneyOutput = (example: number) => z.number().meta({ example });

const BOOLEAN_TEXT = ['true', 'false', '1', '0'];

/**
 * Query-string boolean: true or false, and 1 or 0 too (DECISIONS §5). Documented as a boolean or the integers
 * 1 and 0, so that a validator reading the document takes all four; the query string brings it as text,
 * checked here.
 */
export const queryBoolean = z
  .unknown()
  .refine((value) => typeof value === 'boolean' || (typeof value === 'string' && BOOLEAN_TEXT.includes(value)), {
    message: 'must be true, false, 1 or 0',
    params: detail('invalid_enum'),
  })
  .transform((value) => value === true || value === 'true' || value === '1')
  .meta({ anyOf: [{ type: 'boolean' }, { type: 'integer', enum: [0, 1], minimum: 0, maximum: 1 }] });


/**
 * A query-string number as plain digits or not at all (DECISIONS §5: anything else 400): digits, with a
 * minus sign or not, become the number `schema` checks (so -1 is out of range, not a wrong type); any other text ("0x10", "1e1", " 10", "+10", "10.0") becomes NaN, refused as not
 * a number; an empty value stays empty. Absent stays absent (required, or the schema's default).
 */
export const plainDigits = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && value !== '' ? (/^-?[0-9]+$/.test(value) ? Number(value) : Number.NaN) : value), schema);
