/** The closed list of error codes (DECISIONS.md §1) and the one code -> HTTP status table. */
export const ERROR_STATUS = {
  validation_error: 400,
  invalid_status_transition: 400,
  primary_location: 400,
  unauthorized: 401,
  addon_required: 403,
  ip_restricted: 403,
  insufficient_scope: 403,
  usage_limit_exceeded: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  schedule_conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * What is wrong with one field, a closed list a program can branch on (DECISIONS.md §1). The message says
 * the same for people; `invalid` is any other rule and its message names the rule.
 */
export const DETAIL_CODES = [
  'required',
  'empty',
  'invalid_type',
  'invalid_format',
  'invalid_enum',
  'out_of_range',
  'unknown_field',
  'read_only',
  'invalid_reference',
  'invalid',
] as const;

export type DetailCode = (typeof DETAIL_CODES)[number];

export interface ErrorDetail {
  /** The field's path in the request: `line_items[0].quantity`, a query parameter, a path parameter or a header. */
  field: string;
  code: DetailCode;
  /** A predicate that follows the field's name: "is required", "must be an email address". */
  message: string;
}

/** One hold a refused booking clashes with (DECISIONS §13): a visit's or a time-off entry's. */
export interface ScheduleConflict {
  user_id: string;
  visit_uuid?: string;
  time_off_uuid?: string;
  starts_at: string;
  ends_at: string;
}

/**
 * Thrown for a request that was already answered on its socket (a body cut for coming too slowly, or at
 * shutdown): its handler must not run, and no second answer is written.
 */
export class AnsweredOnSocket extends Error {
  constructor() {
    super('The request was already answered on its connection.');
    this.name = 'AnsweredOnSocket';
  }
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  readonly statusCode: number;
  /** Only on `schedule_conflict`: the records the booking clashes with. */
  readonly conflicts?: ScheduleConflict[];
  /** A 503 of a passing condition: the seconds to wait before retrying, answered as Retry-After. */
  readonly retryAfterSeconds?: number;

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[], conflicts?: ScheduleConflict[]) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
    this.statusCode = ERROR_STATUS[code];
    if (conflicts) this.conflicts = conflicts;
  }
}

/**
 * 409 schedule_conflict: the write would hold a user twice at one moment. `details` names each clashing
 * field (`assigned_user_ids[i]` or `user_id`), `conflicts` the records it clashes with.
 */
export function scheduleConflict(details: ErrorDetail[], conflicts: ScheduleConflict[]): AppError {
  const fields = details.map((detail) => detail.field).join(', ');
  const message = fields
    ? `The schedule has a conflict: ${fields} would be booked twice at the same time; nothing was changed.`
    : 'The schedule has a conflict: a user would be booked twice at the same time; nothing was changed.';
  return new AppError('schedule_conflict', message, details, conflicts);
}

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found.`);

/** How long a client waits before retrying a request the database could not serve (Retry-After). */
export const DATABASE_RETRY_AFTER_SECONDS = 1;

/**
 * 503 service_unavailable for a database that cannot serve the request now (unreachable, restarting, a
 * statement cut by its timeout, a deadlock rolled back): nothing was written, and Retry-After says when to
 * send it again.
 */
export class DatabaseUnavailableError extends AppError {
  override readonly retryAfterSeconds = DATABASE_RETRY_AFTER_SECONDS;

  constructor(message = 'The database is unavailable; retry shortly.') {
    super('service_unavailable', message);
  }
}

/**
 * An error names at most this many problems (its details; its message the first MAX_SUMMARIZED of them and
 * how many more): a form of thousands of unknown fields gets a short answer, not one of megabytes built on
 * the event loop (DECISIONS §11). JSON bodies of that many fields are refused before they are read (json-body.ts).
 */
export const MAX_ERROR_DETAILS = 100;
const MAX_SUMMARIZED = 20;

/**
 * The one way a validation error is worded: one item per problem of a field (the first of two with the same
 * field and code stands), and a message that lists them, so every 400 with details reads the same.
 * `where` names the part of the request: body, query, path, headers, upload, or request when it varies.
 */
export function validationError(details: ErrorDetail[], where = 'request'): AppError {
  const seen = new Set<string>();
  const distinct: ErrorDetail[] = [];
  let more = 0;
  for (const detail of details) {
    const key = `${detail.field}\u0000${detail.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (distinct.length < MAX_ERROR_DETAILS) distinct.push(detail);
    else more++;
  }
  const summarized = distinct.slice(0, MAX_SUMMARIZED);
  const rest = distinct.length - summarized.length + more;
  const summary = summarized.map((detail) => `${detail.field} ${detail.message}`).join('; ');
  return new AppError('validation_error', `Invalid ${where}: ${summary}${rest > 0 ? `; and ${rest} more problems` : ''}.`, distinct);
}

/** One field that breaks a rule the schema cannot express (the rules of services). */
export const invalidField = (field: string, message: string, code: DetailCode = 'invalid') =>
  validationError([{ field, code, message }]);

/** A reference in a body that is not a live record of the company: missing, deleted or another company's. */
export const missingReference = (field: string) =>
  invalidField(field, 'does not refer to an existing record of this company', 'invalid_reference');
