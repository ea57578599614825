import { z } from 'zod';
import { DETAIL_CODES, validationError, type AppError, type DetailCode, type ErrorDetail } from '../errors.js';

/*
 * The one mapping from zod's issues to the detail codes and messages of DECISIONS.md §1. Every request part
 * (body, query, path, headers, upload fields) is parsed through parseInput, so a client sees one vocabulary.
 * A schema's own message (`must be xxx-xxx-xxxx`) stands; where a schema gives none, the messages below are
 * used instead of zod's, so no validator text reaches a client.
 */

/** What a refinement passes in `params` to choose its detail code: `{ params: detail('invalid_format') }`. */
export const detail = (code: DetailCode) => ({ detail: code });

/** Everything the mapping reads from an issue, raw (in an error map) or final. */
interface IssueLike {
  code?: string;
  input?: unknown;
  path?: PropertyKey[];
  expected?: string;
  origin?: string;
  format?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  divisor?: number;
  values?: unknown[];
  keys?: string[];
  params?: { detail?: unknown };
  issues?: IssueLike[];
  message?: string;
}

const isEmpty = (value: unknown) => value === '' || (Array.isArray(value) && value.length === 0);

export function detailCodeOf(issue: IssueLike): DetailCode {
  const code = detailCodeOfIssue(issue);
  // An empty string where a value of some form is needed is `empty` (DECISIONS §1), whatever check saw it.
  return issue.input === '' && (code === 'invalid_format' || code === 'invalid_enum' || code === 'invalid_type') ? 'empty' : code;
}

function detailCodeOfIssue(issue: IssueLike): DetailCode {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'required' : 'invalid_type';
    case 'invalid_value':
      return issue.input === undefined ? 'required' : 'invalid_enum';
    case 'too_small':
      return isEmpty(issue.input) ? 'empty' : 'out_of_range';
    case 'too_big':
    case 'not_multiple_of':
      return 'out_of_range';
    case 'invalid_format':
      return 'invalid_format';
    case 'unrecognized_keys':
      return 'unknown_field';
    case 'invalid_key':
    case 'invalid_element':
      return issue.issues?.[0] ? detailCodeOf(issue.issues[0]) : 'invalid';
    case 'custom': {
      const chosen = issue.params?.detail;
      return (DETAIL_CODES as readonly unknown[]).includes(chosen) ? (chosen as DetailCode) : 'invalid';
    }
    default:
      return 'invalid';
  }
}

const TYPE_NOUNS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'a JSON object',
  record: 'a JSON object',
  array: 'an array',
  date: 'a date',
  null: 'null',
};

const FORMAT_MESSAGES: Record<string, string> = {
  email: 'must be an email address',
  uuid: 'must be a UUID',
  guid: 'must be a UUID',
  url: 'must be a URL',
  datetime: 'must be an ISO 8601 timestamp with Z or an offset',
  date: 'must be a YYYY-MM-DD date',
  time: 'must be HH:MM',
};

const bound = (value: number | bigint | undefined) => String(value);

function rangeMessage(issue: IssueLike): string {
  const small = issue.code === 'too_small';
  const limit = bound(small ? issue.minimum : issue.maximum);
  switch (issue.origin) {
    case 'string':
      return `must be ${small ? 'at least' : 'at most'} ${limit} characters`;
    case 'array':
    case 'set':
      return `must have ${small ? 'at least' : 'at most'} ${limit} items`;
    default:
      if (issue.inclusive === false) return `must be ${small ? 'greater' : 'less'} than ${limit}`;
      return `must be ${small ? 'at least' : 'at most'} ${limit}`;
  }
}

function decimalsMessage(divisor: number | undefined): string {
  const places = divisor ? Math.round(-Math.log10(divisor)) : NaN;
  return places > 0 && 10 ** -places === divisor ? `must have at most ${places} decimal places` : `must be a multiple of ${divisor}`;
}

/** The message of a detail, for an issue whose schema gave none. */
export function defaultMessage(issue: IssueLike): string {
  const code = detailCodeOf(issue);
  switch (code) {
    case 'required':
      return 'is required';
    case 'empty':
      return 'must not be empty';
    case 'invalid_type': {
      const noun = TYPE_NOUNS[issue.expected ?? ''] ?? `of type ${issue.expected}`;
      return issue.input === null ? `must be ${noun}, not null` : `must be ${noun}`;
    }
    case 'invalid_enum':
      return `must be one of: ${(issue.values ?? []).map(String).join(', ')}`;
    case 'out_of_range':
      return issue.code === 'not_multiple_of' ? decimalsMessage(issue.divisor) : issue.issues?.[0] ? defaultMessage(issue.issues[0]) : rangeMessage(issue);
    case 'invalid_format':
      return FORMAT_MESSAGES[issue.format ?? ''] ?? 'has an invalid format';
    case 'unknown_field':
      return 'is not an accepted field';
    default:
      return issue.code === 'invalid_union' ? 'matches none of the accepted forms' : 'is invalid';
  }
}

/** zod's error map for every parse: the curated message where the schema gave none. */
const errorMap = (issue: IssueLike) => defaultMessage(issue);

/** `a.b[0].c` */
export function fieldOfPath(path: ReadonlyArray<PropertyKey>): string {
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? String(part) : `.${String(part)}`))
    .join('');
}

/**
 * The details of a failed parse: one per problem of a field. `whole` names the part itself when an issue
 * is about all of it (`body`). An absent value is always "is required", whatever the schema's message.
 */
export function detailsOf(issues: ReadonlyArray<z.core.$ZodIssue>, whole: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues as ReadonlyArray<IssueLike & { path: PropertyKey[]; message: string }>) {
    const code = detailCodeOf(issue);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys ?? []) details.push({ field: fieldOfPath([...issue.path, key]), code, message: issue.message });
      continue;
    }
    const nested = issue.code === 'invalid_key' || issue.code === 'invalid_element' ? issue.issues?.[0] : undefined;
    const message =
      code === 'required' ? 'is required' : code === 'empty' && issue.input === '' ? 'must not be empty' : (nested?.message ?? issue.message);
    details.push({ field: fieldOfPath(issue.path) || whole, code, message });
  }
  // A value of the wrong type (or none) has that one problem: checks made of it anyway (the length of a
  // string sent for an array) say nothing more.
  const mistyped = new Set(details.filter((item) => item.code === 'invalid_type' || item.code === 'required').map((item) => item.field));
  return mistyped.size === 0 ? details : details.filter((item) => !mistyped.has(item.field) || item.code === 'invalid_type' || item.code === 'required');
}

export type ParseResult<T> = { success: true; data: T } | { success: false; issues: ReadonlyArray<z.core.$ZodIssue> };

/** What a fast validator answers: the parsed value, or undefined to let the schema parse the input. */
export type FastValidator = (data: unknown) => { value: unknown } | undefined;

const fastValidators = new WeakMap<z.ZodType, FastValidator>();

/**
 * Gives a schema a validator for its common, valid input that answers what the schema would, without
 * running it (the path parameters of every item route); anything it does not recognize goes to the schema.
 */
export function registerFastValidator(schema: z.ZodType, validator: FastValidator): void {
  fastValidators.set(schema, validator);
}

export function fastValidatorOf(schema: z.ZodType): FastValidator | undefined {
  return fastValidators.get(schema);
}

/**
 * What the schema makes of an empty object (a query string with no parameters: its defaults), when that is
 * the same plain values every time; undefined otherwise. Computed once per schema by the validator compiler.
 */
export function emptyObjectValue(schema: z.ZodType): Record<string, unknown> | undefined {
  const first = schema.safeParse({});
  if (!first.success || first.data === null || typeof first.data !== 'object' || Array.isArray(first.data)) return undefined;
  const values = Object.values(first.data as Record<string, unknown>);
  if (!values.every((value) => value === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof value))) return undefined;
  const second = schema.safeParse({});
  if (!second.success || JSON.stringify(second.data) !== JSON.stringify(first.data)) return undefined;
  return first.data as Record<string, unknown>;
}

/** Parses with the curated messages and the input kept on each issue (to tell absent from wrong). */
export function parseInput<T extends z.ZodType>(schema: T, data: unknown): ParseResult<z.output<T>> {
  const result = schema.safeParse(data, { reportInput: true, error: errorMap as z.core.$ZodErrorMap });
  return result.success ? { success: true, data: result.data } : { success: false, issues: result.error.issues };
}

/** Parses a request part or throws the 400 that names each problem. */
export function parseOrThrow<T extends z.ZodType>(schema: T, data: unknown, where: string): z.output<T> {
  const result = parseInput(schema, data);
  if (result.success) return result.data;
  throw validationError(detailsOf(result.issues, where), where) as AppError;
}
