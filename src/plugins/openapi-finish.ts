/**
 * Final touches on the generated OpenAPI document: the headers every /api/v1 operation shares, which
 * route schemas cannot express, and no component schema that nothing references.
 */

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

export function finishOpenApiDocument<T>(input: T): T {
  const document = input as unknown as Json;
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) optionalBody(operation);
  }
  for (const [path, operations] of Object.entries(paths)) {
    if (!path.startsWith('/api/v1')) continue;
    for (const [method, operation] of Object.entries(operations)) {
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
