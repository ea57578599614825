import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { DETAIL_CODES, ERROR_STATUS, type ErrorCode } from '../errors.js';
import { timestampOutput } from './formats.js';

/** The success envelope: {success: true, data}. */
export function ok<T>(data: T): { success: true; data: T } {
  return { success: true, data };
}

/** The start of every success envelope's JSON text, up to its data. */
export const OK_JSON_HEAD = '{"success":true,"data":';

/** The success envelope around data that is already JSON text: the answer is written without a serializer. */
export function okJson(dataJson: string): string {
  return `${OK_JSON_HEAD}${dataJson}}`;
}

/**
 * Sends JSON text as it is (fastify sends a string with a JSON content type without serializing it).
 * For answers assembled from stored JSON text, which the route's response schema documents.
 */
export function sendJson(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  total_pages: number;
}

export const PaginationSchema = z
  .object({
    page: z.number().int().meta({ example: 1 }),
    limit: z.number().int().meta({ example: 50 }),
    total: z.number().int().meta({ example: 120 }),
    total_pages: z.number().int().meta({ example: 3 }),
  })
  .meta({ id: 'Pagination' });

export function okSchema<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}

/** `{success, data: {<plural>: [...], pagination}}` */
export function listSchema(plural: string, item: z.ZodType): z.ZodType {
  return okSchema(z.object({ [plural]: z.array(item), pagination: PaginationSchema }));
}

export const MessageSchema = okSchema(
  z.object({ message: z.string().meta({ example: 'Customer deleted successfully' }) }).meta({ id: 'Message' }),
);

export const ErrorCodeSchema = z
  .enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]])
  .describe('What went wrong, a closed list; branch on it, never on the message.')
  .meta({ id: 'ErrorCode' });

export const ErrorDetailCodeSchema = z
  .enum(DETAIL_CODES)
  .describe(
    'What is wrong with the field: required (absent), empty, invalid_type, invalid_format, invalid_enum (the message lists the values), ' +
      'out_of_range, unknown_field, read_only (cannot be set, or cannot change after create), invalid_reference (not a live record of the company, ' +
      'or not the one the rest of the body implies), invalid (any other rule; the message says which).',
  )
  .meta({ id: 'ErrorDetailCode' });

export const ErrorDetailSchema = z
  .object({
    field: z.string().describe('The field: `line_items[0].quantity`, a query or path parameter, or a header.').meta({ example: 'email' }),
    code: ErrorDetailCodeSchema,
    message: z.string().describe('Follows the field name, for people: "is required", "must be an email address".').meta({ example: 'must be an email address' }),
  })
  .meta({ id: 'ErrorDetail' });

export const ScheduleConflictSchema = z
  .object({
    user_id: z.string().describe('The user who would be booked twice.').meta({ example: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f71' }),
    visit_uuid: z.string().optional().describe('The visit that already holds the user (absent for time off).'),
    time_off_uuid: z.string().optional().describe('The time-off entry that already holds the user (absent for a visit).'),
    starts_at: timestampOutput,
    ends_at: timestampOutput,
  })
  .meta({ id: 'ScheduleConflict', description: 'A visit or time-off entry that holds the user at an overlapping time.' });

/** What went wrong. Named ApiError, not Error, so generated code does not shadow JavaScript's Error. */
export const ApiErrorSchema = z
  .object({
    code: ErrorCodeSchema,
    message: z.string().describe('A sentence for people; it may change.'),
    request_id: z.string().describe('The x-request-id of the request; quote it when reporting a problem.'),
    details: z
      .array(ErrorDetailSchema)
      .optional()
      .describe('Validation errors: one item per problem of a field; on schedule_conflict, each field that clashes.'),
    conflicts: z
      .array(ScheduleConflictSchema)
      .optional()
      .describe('Only on schedule_conflict: the visits and time-off entries the booking clashes with.'),
  })
  .meta({ id: 'ApiError' });

/** The error envelope of every failed request. */
export const ErrorSchema = z
  .object({ success: z.literal(false), error: ApiErrorSchema })
  .meta({ id: 'ErrorResponse' });

export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Validation error (`validation_error`, `invalid_status_transition`, `primary_location`).',
  401: 'Missing, malformed, unknown or revoked API key (`unauthorized`).',
  403: 'Forbidden: `ip_restricted`, `insufficient_scope`, `addon_required` or `usage_limit_exceeded`.',
  404: 'The addressed resource does not exist in this company (`not_found`).',
  405: 'The path exists but not with this method (`method_not_allowed`); the Allow header lists its methods.',
  409: 'A request with the same Idempotency-Key is still in progress (`conflict`), or a booking would hold a user twice at one time (`schedule_conflict`).',
  412: 'If-Match names none of the record\'s current ETags (`precondition_failed`); nothing changed.',
  413: 'The request body is too large (`payload_too_large`).',
  429: 'Rate limit exceeded (`rate_limited`).',
  500: 'Unexpected server error (`internal_error`).',
  503: 'The database is unreachable (`service_unavailable`).',
};

/** The error responses every authenticated route documents. */
export function errorResponses(...statuses: number[]) {
  const all = [400, 401, 403, 429, 500, 503, ...statuses];
  return Object.fromEntries(
    [...new Set(all)].sort().map((status) => [status, ErrorSchema.describe(ERROR_DESCRIPTIONS[status] ?? 'Error')]),
  );
}
