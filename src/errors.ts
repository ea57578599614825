/** The closed list of error codes (DECISIONS.md §1) and the one code -> HTTP status table. */
export const ERROR_STATUS = {
  validation_error: 400,
  invalid_status_transition: 400,
  primary_location: 400,
  unauthorized: 401,
  addon_required: 403,
  ip_restricted: 403,
  usage_limit_exceeded: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  readonly statusCode: number;

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
    this.statusCode = ERROR_STATUS[code];
  }
}

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found.`);

export const invalidField = (field: string, message: string) =>
  new AppError('validation_error', `Invalid ${field}: ${message}`, [{ field, message }]);

/** A reference in a body that is not a live record of the company: missing, deleted or another company's. */
export const missingReference = (field: string) => invalidField(field, 'does not refer to an existing record of this company');
