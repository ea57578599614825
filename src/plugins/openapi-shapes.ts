/**
 * The shapes client generators (openapi-typescript, hey-api, orval) turn into good types, applied to the
 * finished OpenAPI document: every success envelope a named component (`CustomerResponse`,
 * `CustomerListResponse`), request components named without the type provider's `Input` suffix
 * (`CreateCustomerBody`), nullable values as 3.1 type arrays, response objects left open (answers may gain
 * fields, DECISIONS.md §8) while request bodies stay strict. scripts/generator-check.ts holds it.
 */

type Json = Record<string, unknown>;

const REF_PREFIX = '#/components/schemas/';
const refName = (schema: unknown) => {
  const ref = (schema as Json | undefined)?.$ref;
  return typeof ref === 'string' && ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : undefined;
};

export function walk(node: unknown, visit: (object: Json) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit);
  } else if (node && typeof node === 'object') {
    visit(node as Json);
    for (const value of Object.values(node)) walk(value, visit);
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function operationsOf(document: Json): Json[] {
  return Object.values((document.paths ?? {}) as Record<string, Record<string, Json>>).flatMap((operations) => Object.values(operations));
}

/** `{success: true, data}`: the success envelope, as zod writes okSchema(). */
function envelopeData(schema: Json): unknown {
  const properties = schema.properties as Json | undefined;
  const success = properties?.success as Json | undefined;
  const alwaysTrue = success?.const === true || (Array.isArray(success?.enum) && success.enum.length === 1 && success.enum[0] === true);
  if (schema.type !== 'object' || !properties || !alwaysTrue || !('data' in properties)) return undefined;
  return properties.data;
}

/** The component name of an envelope: `<Record>Response`, `<Record>ListResponse` for a page of records. */
function envelopeName(data: unknown): string | undefined {
  const named = refName(data);
  if (named) return `${named}Response`;
  const properties = (data as Json | undefined)?.properties as Record<string, Json> | undefined;
  if (!properties || !('pagination' in properties)) return undefined;
  const lists = Object.entries(properties).filter(([name, schema]) => name !== 'pagination' && schema.type === 'array');
  const item = lists.length === 1 ? refName(lists[0][1].items) : undefined;
  return item ? `${item.replace(/ListItem$/, '')}ListResponse` : undefined;
}

/**
 * Every success envelope becomes a named component, shared by the operations that answer the same one
 * (GET, PUT, PATCH of a customer: CustomerResponse). An envelope whose data has no name fails the build:
 * give its data schema an id.
 */
export function nameEnvelopes(document: Json): void {
  const components = document.components as Json;
  const schemas = (components.schemas ??= {}) as Record<string, unknown>;
  for (const operation of operationsOf(document)) {
    for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Json>)) {
      const content = (response.content as Record<string, Json> | undefined)?.['application/json'];
      const schema = content?.schema as Json | undefined;
      if (!schema || schema.$ref || !/^2/.test(status)) continue;
      const data = envelopeData(schema);
      if (data === undefined) continue;
      const name = envelopeName(data);
      if (!name) throw new Error(`${String(operation.operationId)}: name the data schema of its ${status} answer (zod .meta({ id }))`);
      // An envelope may carry a description of its own (share.routes.ts); it stays on the response.
      const { description, ...shape } = schema;
      if (schemas[name] && !sameJson(schemas[name], shape)) throw new Error(`two different envelopes would be named ${name}`);
      schemas[name] = shape;
      content!.schema = { $ref: `${REF_PREFIX}${name}` };
      if (typeof description === 'string' && !response.description) response.description = description;
    }
  }
}

function renameRefs(node: unknown, from: string, to: string): void {
  walk(node, (object) => {
    if (object.$ref === `${REF_PREFIX}${from}`) object.$ref = `${REF_PREFIX}${to}`;
  });
}

/**
 * fastify-type-provider-zod names a schema used as input `<id>Input`; a request schema is named by its id
 * alone (`CreateCustomerBody`, as the code names it). An input component identical to an output one (an
 * enum) is the output one.
 */
export function nameInputs(document: Json): void {
  const schemas = ((document.components as Json).schemas ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(schemas)) {
    if (!name.endsWith('Input')) continue;
    const wanted = name.slice(0, -'Input'.length);
    const existing = schemas[wanted];
    if (existing !== undefined && !sameJson(existing, schemas[name])) {
      throw new Error(`the request schema ${name} would be named ${wanted}, which another schema has: change its id`);
    }
    // Request objects end in Body (the Spectral request rules find them so); a shared enum is merged above.
    const isObject = (schemas[name] as Json).type === 'object';
    if (existing === undefined && isObject && !wanted.endsWith('Body')) throw new Error(`the request schema id ${wanted} must end in Body`);
    if (existing === undefined) schemas[wanted] = schemas[name];
    delete schemas[name];
    renameRefs(document, name, wanted);
  }
  // Keep the components in name order, as a reader looks them up.
  (document.components as Json).schemas = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
}

/** The component names a set of schemas refers to, transitively. */
function reachable(roots: unknown, schemas: Record<string, unknown>): Set<string> {
  const found = new Set<string>();
  const pending: unknown[] = [roots];
  while (pending.length > 0) {
    walk(pending.pop(), (object) => {
      const name = refName(object);
      if (name && !found.has(name) && schemas[name] !== undefined) {
        found.add(name);
        pending.push(schemas[name]);
      }
    });
  }
  return found;
}

function open(node: unknown): void {
  walk(node, (object) => {
    if (object.additionalProperties === false) delete object.additionalProperties;
  });
}

/**
 * Answers may gain fields within /api/v1 (DECISIONS.md §8): response objects are open, so a client's strict
 * validator does not reject the first field the API adds. Request bodies stay strict (an unknown field is
 * 400), so a schema that requests use keeps `additionalProperties: false`.
 */
export function openResponses(document: Json): void {
  const schemas = ((document.components as Json).schemas ?? {}) as Record<string, unknown>;
  const operations = operationsOf(document);
  const requestRoots = operations.map((operation) => [operation.requestBody, operation.parameters]);
  const responseRoots = [operations.map((operation) => operation.responses), (document.components as Json).responses, document.webhooks];
  const requested = reachable(requestRoots, schemas);
  for (const operation of operations) {
    for (const response of Object.values((operation.responses ?? {}) as Record<string, Json>)) {
      for (const content of Object.values((response.content ?? {}) as Record<string, Json>)) if (!refName(content.schema)) open(content.schema);
    }
  }
  for (const name of reachable(responseRoots, schemas)) {
    if (requested.has(name)) {
      if (JSON.stringify(schemas[name]).includes('"additionalProperties":false')) {
        throw new Error(`${name} is both a request and a response schema: give the request its own id`);
      }
      continue;
    }
    open(schemas[name]);
  }
}

/**
 * OpenAPI 3.1 writes a nullable value as a type array (`type: ["string", "null"]`); zod writes `anyOf`
 * with a null member, which generators turn into a model per field. A nullable reference keeps `anyOf`.
 */
export function nullableTypeArrays(document: Json): void {
  walk(document, (object) => {
    const anyOf = object.anyOf as Json[] | undefined;
    if (!Array.isArray(anyOf) || anyOf.length !== 2) return;
    const nullIndex = anyOf.findIndex((member) => member.type === 'null' && Object.keys(member).length === 1);
    if (nullIndex === -1) return;
    const value = anyOf[1 - nullIndex];
    if (typeof value.type !== 'string' || value.$ref || value.anyOf || value.oneOf || value.allOf) return;
    delete object.anyOf;
    const merged: Json = { ...value, ...object, type: [value.type, 'null'] };
    if (Array.isArray(value.enum)) merged.enum = [...value.enum, null];
    if ('const' in value) {
      merged.enum = [value.const, null];
      delete merged.const;
    }
    for (const key of Object.keys(object)) delete object[key];
    Object.assign(object, merged);
  });
}

/** A multipart file is `type: string, format: binary`, what every generator maps to a Blob or File. */
export function binaryFileFields(requestBody: Json | undefined): void {
  const multipart = (requestBody?.content as Record<string, Json> | undefined)?.['multipart/form-data'];
  if (!multipart) return;
  walk(multipart.schema, (object) => {
    if (object.contentMediaType === 'application/octet-stream' || object.format === 'binary') {
      delete object.contentMediaType;
      object.type = 'string';
      object.format = 'binary';
    }
  });
}
