import type {
  FastifyInstance,
  FastifyRequest,
  FastifySchema,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteShorthandOptionsWithHandler,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Db } from '../db/client.js';
import { actorOf, type Actor, type Addon } from '../auth/principal.js';
import type { Scope, ScopeArea } from '../auth/scopes.js';
import { errorResponses, listSchema, MessageSchema, ok, okJson, okSchema, sendJson } from './envelope.js';
import { UUID_PATTERN, uuidString } from './formats.js';
import { registerFastValidator } from './validation.js';
import { GetQuery, type JsonPage, type Page } from './list-query.js';
import { SECURITY } from './openapi.js';

/**
 * The five operations every resource offers, called with the company id explicitly. A list item may
 * embed less than the record that get, create and update answer; create may answer more (a secret).
 */
export interface CrudService<TItem, TRecord, TCreate, TUpdate, TListQuery, TCreated extends TRecord = TRecord> {
  list(db: Db, companyId: string, query: TListQuery): Promise<Page<TItem>>;
  /**
   * The page as JSON text when the service reads this query's page so (a hot list shape), else null: it
   * is answered as it comes, with no item parsed or serialized in Node. Other queries go to list.
   */
  listJson?(db: Db, companyId: string, query: TListQuery): Promise<JsonPage | null>;
  get(db: Db, companyId: string, uuid: string, includeDeleted: boolean): Promise<TRecord>;
  /** The record as JSON text, when the service reads it so (a hot read): answered as it comes, as listJson. */
  getJson?(db: Db, companyId: string, uuid: string, includeDeleted: boolean): Promise<string>;
  create(db: Db, actor: Actor, body: TCreate): Promise<TCreated>;
  update(db: Db, actor: Actor, uuid: string, body: TUpdate): Promise<TRecord>;
  remove(db: Db, actor: Actor, uuid: string): Promise<void>;
}

export const UuidParams = z.strictObject({ uuid: uuidString.describe('The record id.') });

// The path of every item route: a well-formed uuid is answered as the schema would (lower-cased) without running it.
registerFastValidator(UuidParams, (data) => {
  const uuid = (data as { uuid?: unknown }).uuid;
  if (typeof uuid !== 'string' || !UUID_PATTERN.test(uuid) || Object.keys(data as object).length !== 1) return undefined;
  return { value: { uuid: uuid.toLowerCase() } };
});

/**
 * What a route with this schema receives as its request, typed by the zod type provider from the schema:
 * the service below is typed with the same request parts, so the handlers hand them over as they come.
 */
type RequestOf<Schema extends FastifySchema> = FastifyRequest<RouteGenericInterface, RawServerDefault, RawRequestDefaultExpression, Schema, ZodTypeProvider>;
type QueryOf<S extends z.ZodType> = RequestOf<{ querystring: S }>['query'];
type BodyOf<S extends z.ZodType> = RequestOf<{ body: S }>['body'];

/** A route's options and handler, for `app.get(path, ...)` and its siblings on a zod-typed instance. */
type Route<Schema extends FastifySchema> = RouteShorthandOptionsWithHandler<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  unknown,
  Schema,
  ZodTypeProvider
>;

export interface CrudRoutesOptions<
  TItem,
  TRecord,
  TCreated extends TRecord,
  TCreate extends z.ZodType,
  TUpdate extends z.ZodType,
  TList extends z.ZodType,
> {
  tag: string;
  /** Singular noun for messages and summaries, e.g. 'Customer'. */
  noun: string;
  /** The key of the array in list responses, e.g. 'customers'. */
  plural: string;
  listItem: z.ZodType<TItem>;
  record: z.ZodType<TRecord>;
  /** The create answer when it differs from the record (e.g. a secret shown only once). */
  createdRecord?: z.ZodType<TCreated>;
  createBody: TCreate;
  updateBody: TUpdate;
  listQuery: TList;
  /** Checked against the schemas above, which document its answers. */
  service: CrudService<NoInfer<TItem>, NoInfer<TRecord>, BodyOf<TCreate>, BodyOf<TUpdate>, QueryOf<TList>, NoInfer<TCreated>>;
  descriptions?: Partial<Record<'list' | 'get' | 'create' | 'update' | 'remove', string>>;
  addon?: Addon;
  /** The scope area of the resource: list and get need `<area>:read`, the writes `<area>:write`. */
  scope: ScopeArea;
  /** Error statuses an update may answer besides 404 and 413 (409 schedule_conflict). */
  updateErrors?: number[];
}

/**
 * The list, get, create, PUT/PATCH update and soft delete routes of one resource, the same way for all.
 * The module declares each route itself, its method, path and operationId written out:
 * `app.get('/customers', crud.list('listCustomers'))`.
 */
export function crudRoutes<
  TItem,
  TRecord,
  TCreated extends TRecord,
  TCreate extends z.ZodType,
  TUpdate extends z.ZodType,
  TList extends z.ZodType,
>(app: FastifyInstance, options: CrudRoutesOptions<TItem, TRecord, TCreated, TCreate, TUpdate, TList>) {
  const { tag, noun, plural, service, descriptions = {} } = options;
  const lowerNoun = noun.toLowerCase();
  // "an estimate", "an invoice", "a customer".
  const aNoun = `${'aeiou'.includes(lowerNoun[0]) ? 'an' : 'a'} ${lowerNoun}`;
  const addon: { addon?: Addon } = options.addon ? { addon: options.addon } : {};
  const readConfig = { ...addon, scope: `${options.scope}:read` as Scope };
  const writeConfig = { ...addon, scope: `${options.scope}:write` as Scope };
  // Get, create and update answer one record: they carry its ETag (src/plugins/etag.ts).
  const getConfig = { ...readConfig, etag: true };
  const recordConfig = { ...writeConfig, etag: true };
  // A create answer with fields a GET never shows (a secret) carries the ETag of the record without them.
  const { record, createdRecord } = options;
  const createOnly =
    createdRecord instanceof z.ZodObject && record instanceof z.ZodObject
      ? Object.keys(createdRecord.shape).filter((key) => !(key in record.shape))
      : [];
  // A create's write completes its Idempotency-Key in its own transaction (shared/keyed-writes.ts).
  const createConfig = { ...recordConfig, etagOmit: createOnly, idempotency: 'atomic' as const };
  const single = okSchema(record);
  const db = () => app.deps.database.db;

  const update = (method: 'PUT' | 'PATCH', operationId: string) => {
    const schema = {
      tags: [tag],
      operationId,
      summary: `Update ${aNoun} (${method}; partial)`,
      description: descriptions.update ?? 'Partial update: absent fields are unchanged, null clears a nullable field.',
      security: SECURITY,
      params: UuidParams,
      body: options.updateBody,
      response: { 200: single, ...errorResponses(404, 413, ...(options.updateErrors ?? [])) },
    };
    const route: Route<typeof schema> = {
      config: recordConfig,
      schema,
      handler: async (request) => ok(await service.update(db(), actorOf(request), request.params.uuid, request.body)),
    };
    return route;
  };

  return {
    /** GET of the collection: a page of list items, newest first. */
    list(operationId: string) {
      const schema = {
        tags: [tag],
        operationId,
        summary: `List ${plural}`,
        description: descriptions.list ?? `Newest first. Soft-deleted ${plural} only with include_deleted=true.`,
        security: SECURITY,
        querystring: options.listQuery,
        response: { 200: listSchema(plural, options.listItem), ...errorResponses() },
      };
      const route: Route<typeof schema> = {
        config: readConfig,
        schema,
        handler: async (request, reply) => {
          const json = await service.listJson?.(db(), request.principal.companyId, request.query);
          if (json) return sendJson(reply, okJson(`{${JSON.stringify(plural)}:${json.itemsJson},"pagination":${JSON.stringify(json.pagination)}}`));
          const page = await service.list(db(), request.principal.companyId, request.query);
          return ok({ [plural]: page.items, pagination: page.pagination });
        },
      };
      return route;
    },

    /** GET of one record. */
    get(operationId: string) {
      const schema = {
        tags: [tag],
        operationId,
        summary: `Get ${aNoun}`,
        description: descriptions.get ?? `A soft-deleted ${lowerNoun} is 404 unless include_deleted=true.`,
        security: SECURITY,
        params: UuidParams,
        querystring: GetQuery,
        response: { 200: single, ...errorResponses(404) },
      };
      const route: Route<typeof schema> = {
        config: getConfig,
        schema,
        handler: async (request, reply) => {
          const { companyId } = request.principal;
          if (service.getJson) return sendJson(reply, okJson(await service.getJson(db(), companyId, request.params.uuid, request.query.include_deleted)));
          return ok(await service.get(db(), companyId, request.params.uuid, request.query.include_deleted));
        },
      };
      return route;
    },

    /** POST of the collection. */
    create(operationId: string) {
      const schema = {
        tags: [tag],
        operationId,
        summary: `Create ${aNoun}`,
        description: descriptions.create,
        security: SECURITY,
        body: options.createBody,
        response: { 200: createdRecord ? okSchema(createdRecord) : single, ...errorResponses(409, 413) },
      };
      const route: Route<typeof schema> = {
        config: createConfig,
        schema,
        handler: async (request) => ok(await service.create(db(), actorOf(request), request.body)),
      };
      return route;
    },

    /** PUT of one record: a partial update, as PATCH. */
    update: (operationId: string) => update('PUT', operationId),

    /** PATCH of one record. */
    patch: (operationId: string) => update('PATCH', operationId),

    /** DELETE of one record: a soft delete. */
    remove(operationId: string) {
      const schema = {
        tags: [tag],
        operationId,
        summary: `Delete ${aNoun} (soft)`,
        description: descriptions.remove ?? 'Sets deleted_at; the record stays and is listed only with include_deleted=true.',
        security: SECURITY,
        params: UuidParams,
        response: { 200: MessageSchema, ...errorResponses(404) },
      };
      const route: Route<typeof schema> = {
        config: writeConfig,
        schema,
        handler: async (request) => {
          await service.remove(db(), actorOf(request), request.params.uuid);
          return ok({ message: `${noun} deleted successfully` });
        },
      };
      return route;
    },
  };
}
