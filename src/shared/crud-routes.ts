import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Db } from '../db/client.js';
import { actorOf, type Actor, type Addon } from '../auth/principal.js';
import { errorResponses, listSchema, MessageSchema, ok, okSchema } from './envelope.js';
import { uuidString } from './formats.js';
import { GetQuery, type Page } from './list-query.js';
import { SECURITY } from './openapi.js';

/**
 * The five operations every resource offers, called with the company id explicitly. A list item may
 * embed less than the record that get, create and update answer; create may answer more (a secret).
 */
export interface CrudService<TItem, TRecord, TCreate, TUpdate, TListQuery, TCreated extends TRecord = TRecord> {
  list(db: Db, companyId: string, query: TListQuery): Promise<Page<TItem>>;
  get(db: Db, companyId: string, uuid: string, includeDeleted: boolean): Promise<TRecord>;
  create(db: Db, actor: Actor, body: TCreate): Promise<TCreated>;
  update(db: Db, actor: Actor, uuid: string, body: TUpdate): Promise<TRecord>;
  remove(db: Db, actor: Actor, uuid: string): Promise<void>;
}

export const UuidParams = z.strictObject({ uuid: uuidString.describe('The record id.') });

export interface CrudRoutesOptions<
  TItem,
  TRecord,
  TCreated extends TRecord,
  TCreate extends z.ZodType,
  TUpdate extends z.ZodType,
  TList extends z.ZodType,
> {
  /** Collection path under /api/v1, e.g. '/customers'. */
  path: string;
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
  service: CrudService<NoInfer<TItem>, NoInfer<TRecord>, z.infer<TCreate>, z.infer<TUpdate>, z.infer<TList>, NoInfer<TCreated>>;
  descriptions?: Partial<Record<'list' | 'get' | 'create' | 'update' | 'remove', string>>;
  addon?: Addon;
}

/** Registers list, get, create, PUT/PATCH update and soft delete for one resource, the same way for all. */
export function registerCrudRoutes<
  TItem,
  TRecord,
  TCreated extends TRecord,
  TCreate extends z.ZodType,
  TUpdate extends z.ZodType,
  TList extends z.ZodType,
>(parent: FastifyInstance, options: CrudRoutesOptions<TItem, TRecord, TCreated, TCreate, TUpdate, TList>): void {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const { path, tag, noun, plural, service, descriptions = {} } = options;
  const lowerNoun = noun.toLowerCase();
  // "an estimate", "an invoice", "a customer".
  const aNoun = `${/^[aeiou]/.test(lowerNoun) ? 'an' : 'a'} ${lowerNoun}`;
  const pascalPlural = plural.replace(/(^|_)([a-z])/g, (_, __, char: string) => char.toUpperCase());
  const pascalNoun = noun.replace(/\s+(\w)/g, (_, char: string) => char.toUpperCase());
  const config: { addon?: Addon } = options.addon ? { addon: options.addon } : {};
  // Get, create and update answer one record: they carry its ETag (src/plugins/etag.ts).
  const recordConfig = { ...config, etag: true };
  // A create answer with fields a GET never shows (a secret) carries the ETag of the record without them.
  const { record, createdRecord } = options;
  const createOnly =
    createdRecord instanceof z.ZodObject && record instanceof z.ZodObject
      ? Object.keys(createdRecord.shape).filter((key) => !(key in record.shape))
      : [];
  const createConfig = { ...recordConfig, etagOmit: createOnly };
  const single = okSchema(record);
  const db = () => app.deps.database.db;

  app.get(
    path,
    {
      config,
      schema: {
        tags: [tag],
        operationId: `list${pascalPlural}`,
        summary: `List ${plural}`,
        description: descriptions.list ?? `Newest first. Soft-deleted ${plural} only with include_deleted=true.`,
        security: SECURITY,
        querystring: options.listQuery,
        response: { 200: listSchema(plural, options.listItem), ...errorResponses() },
      },
    },
    async (request) => {
      const page = await service.list(db(), request.principal.companyId, request.query as z.infer<TList>);
      return ok({ [plural]: page.items, pagination: page.pagination });
    },
  );

  app.get(
    `${path}/:uuid`,
    {
      config: recordConfig,
      schema: {
        tags: [tag],
        operationId: `get${pascalNoun}`,
        summary: `Get ${aNoun}`,
        description: descriptions.get ?? `A soft-deleted ${lowerNoun} is 404 unless include_deleted=true.`,
        security: SECURITY,
        params: UuidParams,
        querystring: GetQuery,
        response: { 200: single, ...errorResponses(404) },
      },
    },
    async (request) =>
      ok(await service.get(db(), request.principal.companyId, request.params.uuid, request.query.include_deleted)),
  );

  app.post(
    path,
    {
      config: createConfig,
      schema: {
        tags: [tag],
        operationId: `create${pascalNoun}`,
        summary: `Create ${aNoun}`,
        description: descriptions.create,
        security: SECURITY,
        body: options.createBody,
        response: { 200: createdRecord ? okSchema(createdRecord) : single, ...errorResponses(409, 413) },
      },
    },
    async (request) => ok(await service.create(db(), actorOf(request), request.body as z.infer<TCreate>)),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: `${path}/:uuid`,
      config: recordConfig,
      schema: {
        tags: [tag],
        operationId: `${method === 'PUT' ? 'update' : 'patch'}${pascalNoun}`,
        summary: `Update ${aNoun} (${method}; partial)`,
        description:
          descriptions.update ?? 'Partial update: absent fields are unchanged, null clears a nullable field.',
        security: SECURITY,
        params: UuidParams,
        body: options.updateBody,
        response: { 200: single, ...errorResponses(404, 413) },
      },
      handler: async (request) =>
        ok(
          await service.update(
            db(),
            actorOf(request),
            (request.params as z.infer<typeof UuidParams>).uuid,
            request.body as z.infer<TUpdate>,
          ),
        ),
    });
  }

  app.delete(
    `${path}/:uuid`,
    {
      config,
      schema: {
        tags: [tag],
        operationId: `delete${pascalNoun}`,
        summary: `Delete ${aNoun} (soft)`,
        description: descriptions.remove ?? 'Sets deleted_at; the record stays and is listed only with include_deleted=true.',
        security: SECURITY,
        params: UuidParams,
        response: { 200: MessageSchema, ...errorResponses(404) },
      },
    },
    async (request) => {
      await service.remove(db(), actorOf(request), request.params.uuid);
      return ok({ message: `${noun} deleted successfully` });
    },
  );
}

