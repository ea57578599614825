import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaCompiler, RouteOptions } from 'fastify';
import { randomTimeOrderedId } from '../shared/ids.js';
import { z } from 'zod';
import { AnsweredOnSocket, AppError, DatabaseUnavailableError, missingReference, statusOf, validationError, type ErrorCode, type ErrorDetail } from '../errors.js';
import { detailsOf, emptyObjectValue, fastValidatorOf, parseInput } from '../shared/validation.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route's path pattern with its methods and schemas, as registered (for 405 and read-only fields). */
    routeTable: RouteTable;
  }
}

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

/** The column a foreign-key violation names (the one that is not company_id). */
function foreignKeyField(detail: string | undefined): string {
  const columns = /Key \(([^)]+)\)/.exec(detail ?? '')?.[1]?.split(',').map((column) => column.trim()) ?? [];
  return columns.find((column) => column !== 'company_id') ?? 'reference';
}

/** What the multipart parser (busboy) throws for a body it cannot read: always the client's input. */
const MULTIPART_PARSER_ERRORS =
  /^(?:Multipart: Boundary not found|Boundary required|Unexpected end of multipart data|(?:Part|Preamble) terminated early due to unexpected end of multipart data|Malformed part header|Unsupported Content-Type\.|Missing Content-Type-header\.)$/;

/** A request part that failed its schema, with zod's issues; translate() turns them into details. */
export class RequestValidationError extends Error {
  readonly statusCode = 400;
  constructor(readonly issues: ReadonlyArray<z.core.$ZodIssue>) {
    super('The request is invalid.');
    this.name = 'RequestValidationError';
  }
}

/** The validator of every route schema: zod through the one issue mapping of src/shared/validation.ts. */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  // Decided once per route: a fast validator for the schema's usual input, and what an empty query string gives.
  const fast = fastValidatorOf(schema);
  const empty = httpPart === 'querystring' ? emptyObjectValue(schema) : undefined;
  return (data) => {
    if (fast) {
      const known = fast(data);
      if (known) return known;
    }
    if (empty && isEmptyObject(data)) return { value: { ...empty } };
    // fastify hands an absent body over as null; a JSON null body never gets here (json-body.ts).
    const result = parseInput(schema, httpPart === 'body' && data === null ? undefined : data);
    return result.success ? { value: result.data } : { error: new RequestValidationError(result.issues) };
  };
};

function isEmptyObject(data: unknown): boolean {
  if (data === null || typeof data !== 'object') return false;
  for (const _key in data) return false;
  return true;
}

/** Fastify's names of the request parts, as a client reads them. */
const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

/** Route patterns and what each method of them declares, collected as routes are registered. */
export class RouteTable {
  private readonly routes = new Map<string, { pattern: RegExp; methods: Map<string, RouteOptions['schema']> }>();

  add(url: string, method: string, schema: RouteOptions['schema']): void {
    // Wildcards (CORS preflight, static assets) would make every path "known".
    if (url.includes('*')) return;
    const path = url.length > 1 ? url.replace(/\/+$/, '') : url;
    let entry = this.routes.get(path);
    if (!entry) {
      const source = path
        .split('/')
        .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      entry = { pattern: new RegExp(`^${source}/?$`), methods: new Map() };
      this.routes.set(path, entry);
    }
    entry.methods.set(method.toUpperCase(), schema);
  }

  /**
   * The methods of the route registered with exactly this path and no parameter (`/invoices/preview`), sorted;
   * empty when there is none. Such a path names that route, even where a parameter route (`/invoices/:uuid`)
   * matches it too.
   */
  literalMethodsOf(path: string): string[] {
    const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
    const entry = trimmed.includes(':') ? undefined : this.routes.get(trimmed);
    return entry ? [...entry.methods.keys()].sort() : [];
  }

  /** The methods some route answers on this concrete path, sorted; empty when the path is unknown. */
  methodsOf(path: string): string[] {
    const methods = new Set<string>();
    for (const { pattern, methods: routeMethods } of this.routes.values()) {
      if (pattern.test(path)) for (const method of routeMethods.keys()) methods.add(method);
    }
    return [...methods].sort();
  }

  schemaOf(url: string, method: string): RouteOptions['schema'] | undefined {
    return this.routes.get(url)?.methods.get(method);
  }
}

/** The keys of a zod object schema, looking through optional and nullable (an optional body). */
function objectKeys(schema: unknown): Set<string> {
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodNullable) current = current.unwrap();
  return new Set(current instanceof z.ZodObject ? Object.keys(current.shape) : []);
}

/** The fields of `data` in a route's 200 answer. */
function answeredFields(schema: RouteOptions['schema'] | undefined): Set<string> {
  const success = (schema?.response as Record<string, unknown> | undefined)?.['200'];
  return success instanceof z.ZodObject ? objectKeys(success.shape.data) : new Set<string>();
}

/**
 * An unknown top-level body field that the route's answer carries is read-only (DECISIONS.md §1): set by the
 * server, or, on an update, fixed once the record exists when its create accepts it.
 */
function withReadOnlyFields(details: ErrorDetail[], request: FastifyRequest): ErrorDetail[] {
  const { schema, url, method } = request.routeOptions;
  const isUpdate = (method === 'PUT' || method === 'PATCH') && /\/:[^/]+$/.test(url ?? '');
  const createSchema = isUpdate ? request.server.routeTable.schemaOf((url ?? '').replace(/\/:[^/]+$/, ''), 'POST') : undefined;
  // What the record's answers carry: this route's, and on an update its create's (a secret shown once).
  const answered = new Set([...answeredFields(schema), ...answeredFields(createSchema)]);
  if (answered.size === 0) return details;
  const creatable = isUpdate ? objectKeys(createSchema?.body) : new Set<string>();
  return details.map((detail) => {
    if (detail.code !== 'unknown_field' || !answered.has(detail.field)) return detail;
    return creatable.has(detail.field)
      ? { field: detail.field, code: 'read_only', message: 'cannot be changed after create' }
      : { field: detail.field, code: 'read_only', message: 'is set by the server and cannot be sent' };
  });
}

/** Any failure as the AppError the envelope shows (also for routes that answer errors in HTML). */
export function translate(error: unknown, request?: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof Error && MULTIPART_PARSER_ERRORS.test(error.message)) {
    return new AppError('validation_error', `The multipart body is malformed: ${error.message.replace(/\.$/, '')}.`);
  }
  const fastifyError = error as FastifyError & { validationContext?: string };

  if (error instanceof RequestValidationError) {
    const context = fastifyError.validationContext ?? 'body';
    const where = PART_NAMES[context] ?? context;
    const details = detailsOf(error.issues, where);
    return validationError(where === 'body' && request ? withReadOnlyFields(details, request) : details, where);
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
    // Class 40: PostgreSQL rolled the statement back for a concurrent one (a deadlock); nothing was written.
    if (code === '40001' || code === '40P01') {
      return new DatabaseUnavailableError('The request ran into a concurrent one and was not applied; retry it.');
    }
    if (code === '57014' || code === '57P01' || code === '57P02' || code === '57P03' || code.startsWith('08') || CONNECTION_ERRORS.has(code) || code === '53300') {
      return new DatabaseUnavailableError();
    }
  }

  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge(request);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return validationError(
        [{ field: 'Content-Type', code: 'invalid', message: `must be application/json (multipart/form-data for photo uploads), not ${request?.headers['content-type']?.split(';')[0].trim().slice(0, 100) || 'absent'}` }],
        'headers',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('validation_error', 'The body is not valid JSON.');
    case 'FST_REQ_FILE_TOO_LARGE':
      return validationError([{ field: 'photos', code: 'out_of_range', message: 'has a file larger than the limit' }], 'upload');
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return validationError([{ field: 'photos', code: 'out_of_range', message: 'has too many files or fields' }], 'upload');
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
  if (status === 413) return tooLarge(request);
  if (status >= 400 && status < 500) {
    return new AppError('validation_error', fastifyError.message || 'The request is invalid.');
  }
  return new AppError('internal_error', 'An unexpected error occurred.');
}

/** 413 names the limit the body passed: the route's, else the server's. */
function tooLarge(request: FastifyRequest | undefined): AppError {
  const limit = request?.routeOptions.bodyLimit;
  if (!limit) return new AppError('payload_too_large', 'The request body is too large.');
  const mebibytes = limit / (1024 * 1024);
  const readable = Number.isInteger(mebibytes) ? ` (${mebibytes} MiB)` : '';
  return new AppError('payload_too_large', `The request body is larger than the limit of ${limit} bytes${readable}.`);
}

/** The error envelope (DECISIONS.md §1), with the request id a client quotes when it reports the problem. */
export function errorBody(error: AppError, requestId: string) {
  return {
    success: false as const,
    error: {
      code: error.code,
      message: error.message,
      request_id: requestId,
      ...(error.details ? { details: error.details } : {}),
      ...(error.conflicts ? { conflicts: error.conflicts } : {}),
    },
  };
}

export function sendError(reply: FastifyReply, error: AppError) {
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  return reply
    .status(statusOf(error.code as ErrorCode))
    .type('application/json; charset=utf-8')
    .send(errorBody(error, reply.request.id));
}

/**
 * No route answers this method on this path: 405 with `Allow` when another method does (the methods walked
 * from the route table), else 404. The not-found handler of every scope answers through this.
 */
export function sendNoRoute(request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split('?')[0];
  const allowed = request.server.routeTable.methodsOf(path);
  if (allowed.length > 0 && !allowed.includes(request.method)) return sendMethodNotAllowed(reply, path, allowed);
  return sendError(reply, new AppError('not_found', `No route for ${request.method} ${path}.`));
}

/** 405 method_not_allowed with `Allow`. */
function sendMethodNotAllowed(reply: FastifyReply, path: string, allowed: readonly string[]) {
  reply.header('allow', allowed.join(', '));
  return sendError(
    reply,
    new AppError('method_not_allowed', `${reply.request.method} is not allowed on ${path}; it allows ${allowed.join(', ')}.`),
  );
}

/**
 * The literal route a request names with a method it does not answer, or null: the router sent it to a
 * parameter route beside it (`GET /invoices/preview` reaches `/invoices/:uuid`), but the client named the
 * literal one, so its answer is 405 with that route's methods, not the parameter route's 400. Only a request
 * routed to a route with a parameter is looked at, so a create pays one comparison.
 */
export function misroutedLiteral(request: FastifyRequest): { path: string; allowed: string[] } | null {
  if (!request.routeOptions.url?.includes(':')) return null;
  const path = request.url.split('?')[0];
  const allowed = request.server.routeTable.literalMethodsOf(path);
  return allowed.length > 0 && !allowed.includes(request.method) ? { path, allowed } : null;
}

/**
 * Fastify's `frameworkErrors` option: a malformed URL or an over-long path parameter is refused by the
 * router before any hook runs; it still gets the envelope and a request id.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  const appError = translate(error, request);
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
  const requestId = randomTimeOrderedId();
  this.log.debug({ reqId: requestId, code: error.code }, 'request refused by the HTTP parser');
  answerOnSocket(socket, new AppError('validation_error', clientErrorMessage(error)), requestId);
}

/**
 * Writes `appError`'s envelope straight on the socket and closes it: for a request no reply can answer (one
 * the parser refused, or whose body is still arriving when the server gives up on it).
 */
export function answerOnSocket(socket: Socket, appError: AppError, requestId = randomTimeOrderedId()): void {
  if (socket.destroyed) return;
  const status = statusOf(appError.code);
  const body = JSON.stringify(errorBody(appError, requestId));
  // A response already under way on this socket (a timeout during a download) cannot take another one.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
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

/** The answer, which cannot arrive, to a request whose client left while sending its body. */
const CLIENT_LEFT = new AppError('validation_error', 'The request body was not received in full.');

/** Whether reading the body failed because the client closed the connection: no failure of the server's. */
function leftMidBody(error: unknown, request: FastifyRequest): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return (code === 'ECONNRESET' || (error as Error).message === 'aborted') && request.raw.readableAborted;
}

/** Every failure becomes the error envelope; 5xx bodies never carry internal messages. */
export const errorsPlugin = fp(
  async (app) => {
    const routeTable = new RouteTable();
    app.decorate('routeTable', routeTable);
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routeTable.add(route.url, method, route.schema);
    });
    app.setErrorHandler((error, request: FastifyRequest, reply) => {
      // Its answer is already on the socket: nothing more is written.
      if (error instanceof AnsweredOnSocket) return reply.hijack();
      // A request no route answers is 404 or 405 whatever its body holds (DECISIONS.md §1's order of checks):
      // its body was read on the way to the not-found handler and may have failed to parse.
      if (request.is404 && (error as FastifyError).code?.startsWith('FST_ERR_CTP_')) return sendNoRoute(request, reply);
      // A path parameter refused on a path that is a route of its own: 405 (misroutedLiteral).
      const literal = (error as FastifyError).validationContext === 'params' ? misroutedLiteral(request) : null;
      if (literal) return sendMethodNotAllowed(reply, literal.path, literal.allowed);
      const appError = leftMidBody(error, request) ? CLIENT_LEFT : translate(error, request);
      const status = statusOf(appError.code);
      if (appError === CLIENT_LEFT) request.log.debug('the client closed the connection while sending the body');
      else if (status >= 500) request.log.error({ err: error, code: appError.code }, 'request failed');
      else request.log.debug({ code: appError.code, message: appError.message }, 'request refused');
      return sendError(reply, appError);
    });
    app.setNotFoundHandler(sendNoRoute);
  },
  { name: 'errors' },
);
