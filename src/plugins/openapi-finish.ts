/**
 * Final touches on the generated OpenAPI document: the headers every /api/v1 operation shares, which
 * route schemas cannot express, and no component schema that nothing references.
 */

import { ERROR_DESCRIPTIONS } from '../shared/envelope.js';
import { ETAG_OPERATION_MARK } from './etag.js';

type Json = Record<string, unknown>;

const IDEMPOTENCY_KEY = {
  in: 'header',
  name: 'Idempotency-Key',
  required: false,
  description:
    'Makes the POST safe to retry: the same key with the same request within 24 h returns the first response ' +
    '(with Idempotent-Replayed: true) without doing the work again; the same key with another request is 400; ' +
    'a retry while the first is still running waits for it, or gets 409.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

const USAGE_HEADERS = {
  'X-Usage-Count': { description: 'Requests of the company this month, this one included.', schema: { type: 'integer' } },
  'X-Usage-Limit': { description: 'The monthly request limit; absent when unlimited.', schema: { type: 'integer' } },
  'X-Usage-Resets': { description: 'Start of the next month (UTC), when the count resets.', schema: { type: 'string', format: 'date-time' } },
  'X-Request-Id': { description: 'The request id (echoed when the client sent one).', schema: { type: 'string' } },
};

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
      schema: { type: 'string', example: '"1q2w3e4r5t6y7u8i9o0pAaSsDdFfGgHh"' },
    },
    IfNoneMatch: {
      in: 'header',
      name: 'If-None-Match',
      required: false,
      description:
        "One or more ETags (comma-separated, quoted; W/ tags compare weakly) or `*`: when one is the record's current " +
        'ETag the answer is 304 Not Modified with no body.',
      schema: { type: 'string', example: '"1q2w3e4r5t6y7u8i9o0pAaSsDdFfGgHh"' },
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
 * header, item GETs If-None-Match and 304; PUT, PATCH and DELETE of an item If-Match and 412.
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
  if (/\}$/.test(path) && (method === 'put' || method === 'patch' || method === 'delete')) {
    addParameter(operation, 'IfMatch');
    responses['412'] = {
      description: ERROR_DESCRIPTIONS[412],
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  // Keep the responses in status order.
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

function collectRefs(node: unknown, found: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) collectRefs(item, found);
  } else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.add(value);
      else collectRefs(value, found);
    }
  }
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

export function finishOpenApiDocument<T>(input: T): T {
  const document = input as unknown as Json;
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  const components = (document.components ??= {}) as Record<string, Json>;
  components.headers = { ...ETAG_COMPONENTS.headers, ...components.headers };
  components.parameters = { ...ETAG_COMPONENTS.parameters, ...components.parameters };
  for (const [path, operations] of Object.entries(paths)) {
    if (!path.startsWith('/api/v1')) continue;
    for (const [method, operation] of Object.entries(operations)) {
      documentConditionalRequests(path, method, operation);
      if (method === 'post') {
        const parameters = (operation.parameters as Json[] | undefined) ?? [];
        if (!parameters.some((parameter) => parameter.name === 'Idempotency-Key')) {
          operation.parameters = [...parameters, IDEMPOTENCY_KEY];
        }
      }
      const responses = (operation.responses ?? {}) as Record<string, Json>;
      for (const [status, response] of Object.entries(responses)) {
        // Usage is counted once a request is authenticated.
        if (status === '401') continue;
        response.headers = { ...USAGE_HEADERS, ...(response.headers as Json | undefined) };
      }
    }
  }
  dropUnusedSchemas(document);
  return input;
}
