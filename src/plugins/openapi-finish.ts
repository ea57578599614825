/**
 * Final touches on the generated OpenAPI document, for what route schemas cannot express: the headers and
 * error responses every /api/v1 operation shares (declared once under components and referenced), a real
 * description and example for every response, comma-separated list parameters, `format: uuid` on returned
 * ids, no component schema that nothing references, and the shapes of openapi-shapes.ts for generators.
 */

import type { ErrorDetail } from '../errors.js';
import { ERROR_DESCRIPTIONS } from '../shared/envelope.js';
import { SCOPE_OPERATION_MARK } from '../shared/openapi.js';
import { ETAG_OPERATION_MARK } from './etag.js';
import { binaryFileFields, nameEnvelopes, nameInputs, nullableTypeArrays, openResponses, walk } from './openapi-shapes.js';

type Json = Record<string, unknown>;

const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

const HEADERS: Record<string, Json> = {
  XRequestId: {
    description: 'The request id: the client\'s `x-request-id` when it sent one of 1-255 printable ASCII characters without a quote or a backslash, else one made by the server.',
    schema: { type: 'string', minLength: 1, maxLength: 255, example: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70' },
  },
  XUsageCount: {
    description: 'Requests of the company this calendar month (UTC), this one included.',
    schema: { type: 'integer', minimum: 1, maximum: 2147483647, example: 1234 },
  },
  XUsageLimit: {
    description: 'The company\'s monthly request limit; absent when unlimited.',
    schema: { type: 'integer', minimum: 0, maximum: 9007199254740991, example: 100000 },
  },
  XUsageResets: {
    description: 'When the monthly count resets: the start of the next month, UTC.',
    schema: { type: 'string', format: 'date-time', maxLength: 24, example: '2026-12-01T00:00:00.000Z' },
  },
  XRateLimitLimit: {
    description: 'Requests this key may make per minute (absent when rate limiting is off).',
    schema: { type: 'integer', minimum: 1, maximum: 2147483647, example: 600 },
  },
  XRateLimitRemaining: {
    description: 'Requests this key may still make in the current minute.',
    schema: { type: 'integer', minimum: 0, maximum: 2147483647, example: 599 },
  },
  XRateLimitReset: {
    description: 'Seconds until the current rate-limit window ends.',
    schema: { type: 'integer', minimum: 0, maximum: 60, example: 42 },
  },
  IdempotentReplayed: {
    description:
      'Present (true) when this is the kept answer of an earlier POST with the same Idempotency-Key (a success or ' +
      'an error it answered): the work was not done again.',
    schema: { type: 'string', enum: ['true'] },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0, maximum: 60, example: 42 },
  },
};

const REQUEST_ID = { 'X-Request-Id': header('XRequestId') };
const USAGE = {
  'X-Usage-Count': header('XUsageCount'),
  'X-Usage-Limit': header('XUsageLimit'),
  'X-Usage-Resets': header('XUsageResets'),
};
const RATE_LIMIT = {
  'X-RateLimit-Limit': header('XRateLimitLimit'),
  'X-RateLimit-Remaining': header('XRateLimitRemaining'),
  'X-RateLimit-Reset': header('XRateLimitReset'),
};
/** Headers of a response that passed authentication, the IP check, usage and the rate limit. */
const COUNTED = { ...REQUEST_ID, ...USAGE, ...RATE_LIMIT };

const EXAMPLE_REQUEST_ID = '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70';

const errorExample = (code: string, message: string, details?: ErrorDetail[]) => ({
  value: { success: false, error: { code, message, request_id: EXAMPLE_REQUEST_ID, ...(details ? { details } : {}) } },
});

interface ErrorResponse {
  name: string;
  description: string;
  headers: Json;
  examples: Record<string, { summary: string; value: unknown }>;
}

/** One shared response per error status, with an example for each code it can carry (DECISIONS.md §1). */
const ERROR_RESPONSES: Record<string, ErrorResponse> = {
  '400': {
    name: 'BadRequest',
    description:
      'The request is invalid: `validation_error` (`details` names each field), `invalid_status_transition` ' +
      '(a status move that is not allowed) or `primary_location` (the primary location cannot be deleted).',
    headers: COUNTED,
    examples: {
      validation_error: {
        summary: 'A field is invalid',
        ...errorExample('validation_error', 'Invalid body: first_name must not be empty; email must be an email address.', [
          { field: 'first_name', code: 'empty', message: 'must not be empty' },
          { field: 'email', code: 'invalid_format', message: 'must be an email address' },
        ]),
      },
      read_only: {
        summary: 'A field that cannot change after create',
        ...errorExample('validation_error', 'Invalid body: customer_uuid cannot be changed after create.', [
          { field: 'customer_uuid', code: 'read_only', message: 'cannot be changed after create' },
        ]),
      },
      invalid_reference: {
        summary: 'A reference that does not fit the rest of the body',
        ...errorExample('validation_error', 'Invalid request: customer_uuid must be the customer of the job (job_uuid).', [
          { field: 'customer_uuid', code: 'invalid_reference', message: 'must be the customer of the job (job_uuid)' },
        ]),
      },
      invalid_status_transition: {
        summary: 'A status move that is not allowed',
        ...errorExample('invalid_status_transition', 'An estimate cannot move from Accepted to Pending.', [
          { field: 'status', code: 'invalid', message: 'cannot move from Accepted to Pending' },
        ]),
      },
      primary_location: {
        summary: 'Deleting the primary location',
        ...errorExample('primary_location', 'The primary location cannot be deleted; make another location primary first.'),
      },
    },
  },
  '401': {
    name: 'Unauthorized',
    description: 'The API key is missing, malformed, unknown or revoked (`unauthorized`). Not counted as usage.',
    headers: REQUEST_ID,
    examples: {
      unauthorized: {
        summary: 'No or a bad key',
        ...errorExample('unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.'),
      },
    },
  },
  '403': {
    name: 'Forbidden',
    description:
      'The key may not do this: `ip_restricted` (the client address is not among the key\'s allowed IPs), ' +
      '`insufficient_scope` (the key lacks the scope this endpoint needs; the message names it), ' +
      '`addon_required` (the company lacks the add-on this endpoint needs) or `usage_limit_exceeded` (the ' +
      'monthly request limit is used up).',
    headers: { ...REQUEST_ID, ...USAGE },
    examples: {
      ip_restricted: {
        summary: 'Not an allowed IP',
        ...errorExample('ip_restricted', 'This API key may not be used from this IP address.'),
      },
      insufficient_scope: {
        summary: 'The key lacks the scope',
        ...errorExample('insufficient_scope', 'This API key lacks the scope this endpoint needs: invoices:write.'),
      },
      addon_required: {
        summary: 'The add-on is missing',
        ...errorExample('addon_required', 'This endpoint needs the photos add-on.'),
      },
      usage_limit_exceeded: {
        summary: 'The monthly limit is used up',
        ...errorExample('usage_limit_exceeded', 'The monthly request limit of this company is used up.'),
      },
    },
  },
  '404': {
    name: 'NotFound',
    description: 'The addressed record does not exist in this company, or is soft-deleted (`not_found`).',
    headers: COUNTED,
    examples: { not_found: { summary: 'No such record', ...errorExample('not_found', 'Customer not found.') } },
  },
  '409': {
    name: 'Conflict',
    description:
      'The Idempotency-Key was used with a different request, or a request with it is still in progress (`conflict`; ' +
      'use a new key, or retry later). Or the write would ' +
      'book a user twice at one moment (`schedule_conflict`, DECISIONS §13): `details` names each clashing field, ' +
      '`conflicts` the visits and time-off entries it clashes with; nothing was changed.',
    headers: COUNTED,
    examples: {
      conflict: {
        summary: 'Same Idempotency-Key in flight',
        ...errorExample('conflict', 'A request with this Idempotency-Key is still in progress; retry later.'),
      },
      schedule_conflict: {
        summary: 'A technician already booked at that time',
        value: {
          success: false,
          error: {
            code: 'schedule_conflict',
            message: 'The schedule has a conflict: assigned_user_ids[1] would be booked twice at the same time; nothing was changed.',
            request_id: EXAMPLE_REQUEST_ID,
            details: [{ field: 'assigned_user_ids[1]', code: 'invalid', message: 'is already booked at this time' }],
            conflicts: [
              {
                user_id: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f71',
                visit_uuid: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f72',
                starts_at: '2026-12-01T14:00:00.000Z',
                ends_at: '2026-12-01T16:00:00.000Z',
              },
            ],
          },
        },
      },
    },
  },
  '412': {
    name: 'PreconditionFailed',
    description: 'If-Match names none of the record\'s current ETags (`precondition_failed`); nothing changed.',
    headers: COUNTED,
    examples: {
      precondition_failed: {
        summary: 'The record changed since it was read',
        ...errorExample('precondition_failed', 'The record has changed: If-Match does not match its current ETag.'),
      },
    },
  },
  '413': {
    name: 'PayloadTooLarge',
    description: 'The request body is larger than the server accepts (`payload_too_large`).',
    headers: COUNTED,
    examples: {
      payload_too_large: {
        summary: 'Body too large',
        ...errorExample('payload_too_large', 'The request body is larger than the limit of 1048576 bytes (1 MiB).'),
      },
    },
  },
  '429': {
    name: 'RateLimited',
    description: 'This key made too many requests this minute (`rate_limited`); retry after `Retry-After` seconds.',
    headers: { ...COUNTED, 'Retry-After': header('RetryAfter') },
    examples: {
      rate_limited: {
        summary: 'Too many requests',
        ...errorExample('rate_limited', 'Rate limit of 600 requests per minute exceeded; retry in 42 s.'),
      },
    },
  },
  '500': {
    name: 'InternalError',
    description: 'An unexpected server error (`internal_error`); the body says nothing about the inside. Quote x-request-id when reporting it.',
    headers: COUNTED,
    examples: { internal_error: { summary: 'Unexpected error', ...errorExample('internal_error', 'An unexpected error occurred.') } },
  },
  '503': {
    name: 'ServiceUnavailable',
    description:
      'The database is unreachable or the server is shutting down (`service_unavailable`); retry shortly. When the ' +
      'condition passes by itself (the database, a full render queue) `Retry-After` says after how many seconds.',
    headers: { ...COUNTED, 'Retry-After': header('RetryAfter') },
    examples: {
      service_unavailable: {
        summary: 'Database unreachable',
        ...errorExample('service_unavailable', 'The database is unavailable; retry shortly.'),
      },
    },
  },
};

const IDEMPOTENCY_KEY = {
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description:
    'Makes the POST safe to retry: the same key with the same request within 24 h returns the first response ' +
    '(with Idempotent-Replayed: true) without doing the work again; the same key with another request is 409 `conflict`; ' +
    'a retry while the first is still running waits for it, or gets 409.',
  // Visible ASCII only (0x21-0x7e), as the server checks it.
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$', example: 'order-4711-payment-1' },
};

/** What a success answers, by the operation's verb (operationId prefix). */
function successDescription(operationId: string | undefined, summary: string | undefined): string {
  const verb = /^[a-z]+/.exec(operationId ?? '')?.[0];
  switch (verb) {
    case 'list':
      return 'A page of records, newest first by default, with `pagination`.';
    case 'get':
      return 'The record, as it is now.';
    case 'create':
      return 'The created record, exactly as a GET of it answers.';
    case 'update':
    case 'patch':
      return 'The updated record, exactly as a GET of it answers.';
    case 'delete':
      return 'The record is soft-deleted; `data.message` confirms it.';
    case 'preview':
      return 'The amounts a create with the same input would store; nothing is stored.';
    default:
      return summary ? `OK: ${summary.charAt(0).toLowerCase()}${summary.slice(1)}.` : 'OK.';
  }
}

/** Declared once in components and referenced by every operation they apply to. */
const ETAG_COMPONENTS = {
  headers: {
    ETag: {
      description:
        "Strong ETag of the record in `data`: it changes whenever the record's JSON changes (side effects and " +
        'derived values such as an Overdue status included). Send it back in If-Match or If-None-Match.',
      schema: { type: 'string', example: '"1q2w3e4r5t6y7u8i9o0pAaSsDdFfGgHh"' },
    },
  },
  parameters: {
    IfMatch: {
      in: 'header',
      name: 'If-Match',
      required: false,
      description:
        "Makes the write conditional: one or more ETags (comma-separated, quoted) or `*`. When none is the record's " +
        'current ETag (strong comparison: a W/ tag never matches) the answer is 412 `precondition_failed` and nothing ' +
        'changes. Of two concurrent writes with the same If-Match exactly one succeeds. Without it the write is unconditional.',
      schema: { type: 'string', maxLength: 8192, example: '"1q2w3e4r5t6y7u8i9o0pAaSsDdFfGgHh"' },
    },
    IfNoneMatch: {
      in: 'header',
      name: 'If-None-Match',
      required: false,
      description:
        "One or more ETags (comma-separated, quoted; W/ tags compare weakly) or `*`: when one is the record's current " +
        'ETag the answer is 304 Not Modified with no body.',
      schema: { type: 'string', maxLength: 8192, example: '"1q2w3e4r5t6y7u8i9o0pAaSsDdFfGgHh"' },
    },
  },
};

const ETAG_HEADER_REF = { $ref: '#/components/headers/ETag' };

function addParameter(operation: Json, name: string): void {
  const parameters = (operation.parameters as Json[] | undefined) ?? [];
  const ref = `#/components/parameters/${name}`;
  if (!parameters.some((parameter) => parameter.$ref === ref)) operation.parameters = [...parameters, { $ref: ref }];
}

/**
 * ETags (DECISIONS.md §9.4): operations that answer one record (marked by the etag plugin) document the ETag
 * header, item GETs If-None-Match and 304; PUT, PATCH and DELETE of an item (and of the numbering settings)
 * If-Match and 412.
 */
function documentConditionalRequests(path: string, method: string, operation: Json): void {
  const responses = (operation.responses ?? {}) as Record<string, Json>;
  if (operation[ETAG_OPERATION_MARK]) {
    delete operation[ETAG_OPERATION_MARK];
    const ok = responses['200'];
    if (ok) ok.headers = { ETag: ETAG_HEADER_REF, ...(ok.headers as Json | undefined) };
    if (method === 'get') {
      addParameter(operation, 'IfNoneMatch');
      responses['304'] = {
        description: 'Not Modified: If-None-Match names the current ETag; no body.',
        headers: { ETag: ETAG_HEADER_REF },
      };
    }
  }
  // Items, and the numbering settings: one record written in place, its GET's ETag its If-Match.
  const conditional = /\}$/.test(path) || path.endsWith('/numbering');
  if (conditional && (method === 'put' || method === 'patch' || method === 'delete')) {
    addParameter(operation, 'IfMatch');
    responses['412'] = {
      description: ERROR_DESCRIPTIONS[412],
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
    };
  }
  // Keep the responses in status order.
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Scopes (DECISIONS §12): the scope an operation's route declares stays as the `x-required-scope` extension
 * (machine-readable) and becomes a sentence of its description. The security requirements keep empty scope
 * lists: OpenAPI tools read those as OAuth scopes, and the keys here are no OAuth flow.
 */
function documentScope(operation: Json): void {
  const scope = operation[SCOPE_OPERATION_MARK];
  if (typeof scope !== 'string') return;
  const [area, level] = scope.split(':');
  const also = level === 'read' ? `\`${area}:write\` or \`*\`` : '`*`';
  const sentence = `Scope: \`${scope}\` (or ${also}); a key without it gets 403 \`insufficient_scope\`.`;
  operation.description = operation.description ? `${String(operation.description)}\n\n${sentence}` : sentence;
}

function isStringSchema(schema: Json): boolean {
  const type = schema.type;
  if (type === 'string') return true;
  if (Array.isArray(type)) return type.includes('string');
  const anyOf = schema.anyOf as Json[] | undefined;
  return Array.isArray(anyOf) && anyOf.some((member) => member.type === 'string');
}

function setUuidFormat(schema: Json): void {
  const anyOf = schema.anyOf as Json[] | undefined;
  const target = Array.isArray(anyOf) ? anyOf.find((member) => member.type === 'string') : schema;
  if (target && !target.format) target.format = 'uuid';
}

/** Returned ids are UUIDs: `uuid`, `*_uuid`, `*user_id` and a user's `id`. */
function markUuids(node: unknown): void {
  walk(node, (object) => {
    const properties = object.properties as Record<string, Json> | undefined;
    if (!properties || typeof properties !== 'object') return;
    const userShaped = 'first_name' in properties && 'last_name' in properties;
    for (const [name, schema] of Object.entries(properties)) {
      if (!schema || typeof schema !== 'object' || !isStringSchema(schema)) continue;
      if (name === 'uuid' || name.endsWith('_uuid') || /(^|_)user_id$/.test(name) || (name === 'id' && userShaped)) {
        setUuidFormat(schema);
      }
    }
  });
}

const INT32_MAX = 2 ** 31 - 1;

/** Integers name their width: int32 when the bounds fit, else int64 (JavaScript keeps 53 bits of it exactly). */
function integerFormats(node: unknown): void {
  walk(node, (object) => {
    const integer = object.type === 'integer' || (Array.isArray(object.type) && object.type.includes('integer'));
    if (!integer || object.format) return;
    const max = typeof object.maximum === 'number' ? object.maximum : Infinity;
    const min = typeof object.minimum === 'number' ? object.minimum : -Infinity;
    object.format = max <= INT32_MAX && min >= -INT32_MAX - 1 ? 'int32' : 'int64';
  });
}

/**
 * Decimal places as `x-decimal-places`, not as a fractional multipleOf: validators test multipleOf in binary
 * floating point, where 19.99 / 0.01 is 1998.9999999999998, and would refuse amounts the API takes.
 */
function decimalPlaces(node: unknown): void {
  walk(node, (object) => {
    if (typeof object.multipleOf !== 'number' || object.multipleOf >= 1) return;
    const places = Math.round(-Math.log10(object.multipleOf));
    delete object.multipleOf;
    object['x-decimal-places'] = places;
    const rule = `At most ${places} decimal places.`;
    if (typeof object.description !== 'string') object.description = rule;
    else if (!/decimal/.test(object.description)) object.description = `${object.description.replace(/\.?\s*$/, '.')} ${rule}`;
  });
}

/** A query parameter documented as an array is sent comma-separated (`status=New,Scheduled`). */
function commaLists(parameters: Json[] | undefined): void {
  for (const parameter of parameters ?? []) {
    if (parameter.in === 'query' && (parameter.schema as Json | undefined)?.type === 'array') {
      parameter.style = 'form';
      parameter.explode = false;
    }
  }
}

function collectRefs(node: unknown, found: Set<string>): void {
  walk(node, (object) => {
    if (typeof object.$ref === 'string') found.add(object.$ref);
  });
}

function dropUnusedSchemas(document: Json): void {
  const components = document.components as { schemas?: Record<string, unknown> } | undefined;
  if (!components?.schemas) return;
  // Repeat: dropping a schema can leave the ones only it referenced unused.
  for (;;) {
    const used = new Set<string>();
    collectRefs({ ...document, components: { ...components, schemas: undefined } }, used);
    collectRefs(Object.values(components.schemas), used);
    const unused = Object.keys(components.schemas).filter((name) => !used.has(`#/components/schemas/${name}`));
    if (unused.length === 0) return;
    for (const name of unused) delete components.schemas[name];
  }
}

function errorComponent(error: ErrorResponse, withHeaders: boolean): Json {
  return {
    description: error.description,
    // An error a keyed POST answered is kept and replayed like a success.
    ...(withHeaders ? { headers: { ...(error.headers as Json | undefined), 'Idempotent-Replayed': header('IdempotentReplayed') } } : {}),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' }, examples: error.examples } },
  };
}

/** What a keyless route (a share page, a calendar feed) answers a client over its address's limit. */
const KEYLESS_RATE_LIMITED = errorExample(
  'rate_limited',
  'Too many requests from this address: at most 60 a minute to pages served without a key; retry in 42 s.',
);

/**
 * An error answer of a route outside /api/v1 (no key: no usage or key rate-limit headers). The route's own
 * description and any further content it declares (an HTML page to a form) are kept; the JSON is the
 * envelope with the error's examples. A 429 there is per client address and says when to retry.
 */
function keylessErrorComponent(error: ErrorResponse, declared: Json, status: string): Json {
  const generic = errorComponent(error, false);
  const described = typeof declared.description === 'string' && declared.description !== 'Default Response';
  const declaredContent = (declared.content ?? {}) as Json;
  const json = (generic.content as Json)['application/json'] as Json;
  return {
    description: described ? declared.description : generic.description,
    ...(status === '429' ? { headers: { ...REQUEST_ID, 'Retry-After': header('RetryAfter') } } : { headers: REQUEST_ID }),
    content: {
      ...declaredContent,
      'application/json': status === '429' ? { ...json, examples: { rate_limited: { summary: 'Too many requests from this address', ...KEYLESS_RATE_LIMITED } } } : json,
    },
  };
}

const isNull = (schema: unknown) => (schema as Json | undefined)?.type === 'null';

/** A body schema that also accepts null (zod `.nullish()`) is an optional request body. */
function optionalBody(operation: Json): void {
  const body = operation.requestBody as { required?: boolean; content?: Record<string, { schema?: Json }> } | undefined;
  const contents = Object.values(body?.content ?? {});
  const nullable = (schema: Json | undefined) => Array.isArray(schema?.anyOf) && schema.anyOf.length === 2 && schema.anyOf.some(isNull);
  if (!body || contents.length === 0 || !contents.every((content) => nullable(content.schema))) return;
  // Content types may share one schema object: pick every replacement before changing any.
  const replacements = contents.map((content) => (content.schema!.anyOf as Json[]).find((schema) => !isNull(schema)));
  contents.forEach((content, index) => (content.schema = replacements[index]));
  body.required = false;
}

/** The responses with one more, in status order. */
function withResponse(responses: Json, status: string, response: Json): Json {
  return Object.fromEntries(Object.entries({ ...responses, [status]: response }).sort(([a], [b]) => a.localeCompare(b)));
}

export function finishOpenApiDocument<T>(input: T): T {
  const document = input as unknown as Json;
  const components = (document.components ??= {}) as Json;
  components.headers = { ...HEADERS, ...ETAG_COMPONENTS.headers };
  components.parameters = { ...(components.parameters as Json | undefined), ...ETAG_COMPONENTS.parameters, IdempotencyKey: IDEMPOTENCY_KEY };
  const usedResponses = new Set<ErrorResponse>();

  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) optionalBody(operation);
  }
  for (const [path, operations] of Object.entries(paths)) {
    const api = path.startsWith('/api/v1');
    for (const [method, operation] of Object.entries(operations)) {
      documentConditionalRequests(path, method, operation);
      commaLists(operation.parameters as Json[] | undefined);
      if (!operation.description && typeof operation.summary === 'string') operation.description = `${operation.summary}.`;
      documentScope(operation);
      binaryFileFields(operation.requestBody as Json | undefined);
      if (api && method === 'post') {
        const parameters = (operation.parameters as Json[] | undefined) ?? [];
        if (!parameters.some((parameter) => parameter.name === 'Idempotency-Key')) {
          operation.parameters = [...parameters, { $ref: '#/components/parameters/IdempotencyKey' }];
        }
      }
      // Any request but a GET may carry a body, and one past the limit is refused before the route runs
      // (413), even where the operation itself takes none (a DELETE, a bodyless POST).
      if (method !== 'get' && operation.responses && !(operation.responses as Json)['413']) {
        operation.responses = withResponse(operation.responses as Json, '413', {});
      }
      const responses = (operation.responses ?? {}) as Record<string, Json>;
      // A keyless route limited per client address (share pages, calendar feeds) answers that limit's headers.
      const addressLimited = !api && Boolean(responses['429']);
      for (const [status, response] of Object.entries(responses)) {
        const error = ERROR_RESPONSES[status];
        // A keyless page declares its own HTML answers (the share pages); those are kept as declared.
        const html = Boolean((response.content as Json | undefined)?.['text/html']);
        if (error && !html) {
          // Outside /api/v1 (the health probes) there is no key, so no usage or rate-limit headers.
          if (api) usedResponses.add(error);
          responses[status] = api ? { $ref: `#/components/responses/${error.name}` } : keylessErrorComponent(error, response, status);
          if (addressLimited) responses[status].headers = { ...(responses[status].headers as Json | undefined), ...RATE_LIMIT };
          continue;
        }
        if (status === '303') response.headers = { Location: { description: 'Where to go next: the page.', schema: { type: 'string', maxLength: 2048 } }, ...(response.headers as Json | undefined) };
        if (!api && status === '429') response.headers = { ...REQUEST_ID, 'Retry-After': header('RetryAfter'), ...(response.headers as Json | undefined) };
        if (!response.description || response.description === 'Default Response') {
          response.description = successDescription(operation.operationId as string | undefined, operation.summary as string | undefined);
        }
        if (api) response.headers = { ...COUNTED, ...(response.headers as Json | undefined) };
        else response.headers = { ...REQUEST_ID, ...(addressLimited ? RATE_LIMIT : {}), ...(response.headers as Json | undefined) };
        const content = (response.content ?? {}) as Json;
        if (status === '200' && (content['application/pdf'] || content['text/calendar'])) {
          response.headers = {
            ...(response.headers as Json),
            'Content-Disposition': {
              description: 'inline, with the file name to save it under (`Invoice-INV-0001.pdf`, `visits.ics`).',
              schema: { type: 'string', maxLength: 255, example: 'inline; filename="Invoice-INV-0001.pdf"' },
            },
          };
        }
        if (api && method === 'post' && status.startsWith('2')) {
          response.headers = { ...(response.headers as Json), 'Idempotent-Replayed': header('IdempotentReplayed') };
        }
        markUuids(response.content);
      }
    }
  }
  components.responses = Object.fromEntries(
    Object.values(ERROR_RESPONSES)
      .filter((error) => usedResponses.has(error))
      .map((error) => [error.name, errorComponent(error, true)]),
  );
  nameEnvelopes(document);
  markUuids(components.schemas);
  nullableTypeArrays(document);
  integerFormats(document);
  decimalPlaces(document);
  dropUnusedSchemas(document);
  nameInputs(document);
  openResponses(document);
  return input;
}
