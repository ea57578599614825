import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, missingReference, statusOf, type ErrorCode, type ErrorDetail } from '../errors.js';

interface PgLikeError {
  code?: string;
  detail?: string;
  column?: string;
  constraint?: string;
}

const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** node-postgres reports a lost or silent connection with a plain Error (no code) and one of these messages. */
const CONNECTION_MESSAGES =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|Query read timeout|Client was closed and is not queryable/i;

/** The underlying driver error of a (possibly wrapped) query error. */
function driverError(error: unknown): PgLikeError | null {
  let current: unknown = error;
  let lostConnection = false;
  // Drizzle wraps the driver's error (DrizzleQueryError, message "Failed query: ..."): look through causes.
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const candidate = current as PgLikeError & { cause?: unknown };
    if (typeof candidate.code === 'string' && /^[0-9A-Z]{5}$/.test(candidate.code)) return candidate;
    if (typeof candidate.code === 'string' && CONNECTION_ERRORS.has(candidate.code)) return candidate;
    if (current instanceof Error && CONNECTION_MESSAGES.test(current.message)) lostConnection = true;
    current = candidate.cause;
  }
  return lostConnection ? { code: 'ECONNRESET' } : null;
}

function fieldOfPath(path: ReadonlyArray<PropertyKey>): string {
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? String(part) : `.${String(part)}`))
    .join('');
}

/** The column a foreign-key violation names (the one that is not company_id). */
function foreignKeyField(detail: string | undefined): string {
  const columns = /Key \(([^)]+)\)/.exec(detail ?? '')?.[1]?.split(',').map((column) => column.trim()) ?? [];
  return columns.find((column) => column !== 'company_id') ?? 'reference';
}

/** What the multipart parser (busboy) throws for a body it cannot read: always the client's input. */
const MULTIPART_PARSER_ERRORS =
  /^(?:Multipart: Boundary not found|Boundary required|Unexpected end of multipart data|(?:Part|Preamble) terminated early due to unexpected end of multipart data|Malformed part header|Unsupported Content-Type\.|Missing Content-Type-header\.)$/;

/** Any failure as the AppError the envelope shows (also for routes that answer errors in HTML). */
export function translate(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof Error && MULTIPART_PARSER_ERRORS.test(error.message)) {
    return new AppError('validation_error', `The multipart body is malformed: ${error.message.replace(/\.$/, '')}.`);
  }
  const fastifyError = error as FastifyError & { validationContext?: string };

  if (hasZodFastifySchemaValidationErrors(error)) {
    const details: ErrorDetail[] = [];
    for (const issue of error.validation) {
      const path = issue.instancePath.split('/').filter(Boolean).map((part) => (/^\d+$/.test(part) ? Number(part) : part));
      const params = issue.params as { keys?: string[] };
      if (issue.keyword === 'unrecognized_keys' && params.keys) {
        for (const key of params.keys) {
          details.push({ field: fieldOfPath([...path, key]), message: 'is not an accepted field' });
        }
      } else {
        const missing = issue.keyword === 'invalid_type' && /received undefined$/.test(issue.message ?? '');
        details.push({
          field: fieldOfPath(path) || fastifyError.validationContext || 'body',
          message: missing ? 'is required' : (issue.message ?? 'is invalid'),
        });
      }
    }
    const where: string = fastifyError.validationContext === 'querystring' ? 'query' : (fastifyError.validationContext ?? 'request');
    const summary = details.map((detail) => `${detail.field} ${detail.message}`).join('; ');
    return new AppError('validation_error', `Invalid ${where}: ${summary}`, details);
  }

  const pgError = driverError(error);
  if (pgError?.code) {
    const code = pgError.code;
    if (code === '23503') {
      const field = foreignKeyField(pgError.detail);
      return missingReference(field);
    }
    if (code === '23505') return new AppError('conflict', 'The record conflicts with an existing one; retry the request.');
    // Class 22 (data exception) is always a value PostgreSQL refuses: out of range, malformed, a NUL character.
    if (code.startsWith('22') || code === '54000') {
      return new AppError('validation_error', 'A value in the request is out of range or malformed.');
    }
    if (code === '57014' || code === '57P01' || code === '57P02' || code === '57P03' || code.startsWith('08') || CONNECTION_ERRORS.has(code) || code === '53300') {
      return new AppError('service_unavailable', 'The database is unavailable; retry shortly.');
    }
  }

  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is too large.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('validation_error', 'Unsupported Content-Type: send application/json (multipart/form-data for photo uploads).');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('validation_error', 'The JSON body is empty.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('validation_error', 'The body is not valid JSON.');
    case 'FST_REQ_FILE_TOO_LARGE':
      return new AppError('validation_error', 'A file is too large.', [{ field: 'photos', message: 'file is too large' }]);
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new AppError('validation_error', 'Too many files or fields in the upload.', [{ field: 'photos', message: 'too many files' }]);
    case 'FST_ERR_BAD_URL':
      return new AppError('validation_error', 'The URL is malformed.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('validation_error', 'A path parameter is too long.');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new AppError('validation_error', 'The request must be multipart/form-data.');
    case 'FST_MP_PREMATURE_CLOSE':
      return new AppError('validation_error', 'The upload was closed before the multipart body ended.');
    default:
      break;
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new AppError('validation_error', 'The body is not valid JSON.');
  }
  const status = fastifyError.statusCode ?? 500;
  if (status === 429) return new AppError('rate_limited', 'Too many requests; slow down and retry after the time in Retry-After.');
  if (status === 404) return new AppError('not_found', 'Not found.');
  if (status === 413) return new AppError('payload_too_large', 'The request body is too large.');
  if (status >= 400 && status < 500) {
    return new AppError('validation_error', fastifyError.message || 'The request is invalid.');
  }
  return new AppError('internal_error', 'An unexpected error occurred.');
}

export function errorBody(error: AppError) {
  return {
    success: false as const,
    error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
  };
}

export function sendError(reply: FastifyReply, error: AppError) {
  return reply.status(statusOf(error.code as ErrorCode)).type('application/json; charset=utf-8').send(errorBody(error));
}

/**
 * Fastify's `frameworkErrors` option: a malformed URL or an over-long path parameter is refused by the
 * router before any hook runs; it still gets the envelope and a request id.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  const appError = translate(error);
  request.log.debug({ code: appError.code, message: appError.message }, 'request refused');
  return sendError(reply, appError);
}

/** What the HTTP parser refuses before a request exists, as the envelope's sentence. */
function clientErrorMessage(error: NodeJS.ErrnoException): string {
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'The URL or the header section is too long.';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'The request was not received in time.';
  return 'The HTTP request is malformed.';
}

/**
 * Fastify's `clientErrorHandler` option: Node's HTTP parser refuses an over-long URL or header section, a
 * malformed request line or a request that arrives too slowly before any route or hook exists. The answer
 * is still the envelope (400 validation_error, DECISIONS.md §1) with an x-request-id, written on the socket.
 */
export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const requestId = uuidv7();
  const appError = new AppError('validation_error', clientErrorMessage(error));
  const body = JSON.stringify(errorBody(appError));
  this.log.debug({ reqId: requestId, code: error.code }, 'request refused by the HTTP parser');
  // A response already under way on this socket (a timeout during a download) cannot take another one.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    socket.end(
      `HTTP/1.1 ${statusOf(appError.code)} Bad Request\r\n` +
        `content-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\n` +
        `x-content-type-options: nosniff\r\n` +
        `cache-control: no-store\r\n` +
        `connection: close\r\n\r\n${body}`,
    );
    // end() flushes the answer first; a client that keeps sending is cut off shortly after.
    setTimeout(() => socket.destroy(), 1000).unref();
  } else {
    socket.destroy();
  }
}

/** Every failure becomes the error envelope; 5xx bodies never carry internal messages. */
export const errorsPlugin = fp(
  async (app) => {
    app.setErrorHandler((error, request: FastifyRequest, reply) => {
      const appError = translate(error);
      const status = statusOf(appError.code);
      if (status >= 500) request.log.error({ err: error, code: appError.code }, 'request failed');
      else request.log.debug({ code: appError.code, message: appError.message }, 'request refused');
      return sendError(reply, appError);
    });
    app.setNotFoundHandler((request, reply) => {
      return sendError(reply, new AppError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`));
    });
  },
  { name: 'errors' },
);
