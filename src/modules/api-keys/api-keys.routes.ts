import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { UuidParams } from '../../shared/crud-routes.js';
import { errorResponses, listSchema, MessageSchema, ok, okSchema } from '../../shared/envelope.js';
import { GetQuery } from '../../shared/list-query.js';
import { SECURITY } from '../../shared/openapi.js';
import {
  ApiKeyResponse,
  ApiKeyWithSecret,
  CreateApiKeyBody,
  ListApiKeysQuery,
  RollApiKeyBody,
  UpdateApiKeyBody,
} from './api-keys.schemas.js';
import {
  createApiKey,
  getApiKey,
  listApiKeys,
  revokeApiKey,
  rollApiKey,
  updateApiKey,
  type KeyManager,
} from './api-keys.service.js';

const TAG = 'API keys';
const READ = { scope: 'api_keys:read' } as const;
const WRITE = { scope: 'api_keys:write' } as const;
/**
 * The create and roll answers carry the secret, which a GET never shows: left out of their ETag, and never
 * kept for an Idempotency-Key replay (the secret is stored only as its hash).
 */
// Create and roll complete their Idempotency-Key in their own transaction (shared/keyed-writes.ts).
const WITH_SECRET = { ...WRITE, etag: true, etagOmit: ['api_key'], idempotencyOmit: ['api_key'], idempotency: 'atomic' as const };

function managerOf(request: FastifyRequest): KeyManager {
  const { keyCompanyId, userId, mode, scopes } = request.principal;
  const manager: KeyManager = { companyId: keyCompanyId, userId, mode, scopes, ifMatch: request.headers['if-match'] };
  if (request.keyedWrite) manager.idempotency = request.keyedWrite;
  return manager;
}

/** Keys over HTTP (DECISIONS §12): list, get, create, PATCH, revoke and roll. */
export const apiKeyRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = () => app.deps.database.db;

  app.get(
    '/api_keys',
    {
      config: READ,
      schema: {
        tags: [TAG],
        operationId: 'listApiKeys',
        summary: 'List API keys',
        description:
          "Newest first; revoked keys only with include_deleted=true. A live key lists the company's live and test keys, " +
          'a test key only the test keys. Secrets are never shown, only their prefix.',
        security: SECURITY,
        querystring: ListApiKeysQuery,
        response: { 200: listSchema('api_keys', ApiKeyResponse), ...errorResponses() },
      },
    },
    async (request) => {
      const page = await listApiKeys(db(), managerOf(request), request.query);
      return ok({ api_keys: page.items, pagination: page.pagination });
    },
  );

  app.get(
    '/api_keys/:uuid',
    {
      config: { ...READ, etag: true },
      schema: {
        tags: [TAG],
        operationId: 'getApiKey',
        summary: 'Get an API key',
        description: 'A revoked key is 404 unless include_deleted=true; a test key sees test keys only.',
        security: SECURITY,
        params: UuidParams,
        querystring: GetQuery,
        response: { 200: okSchema(ApiKeyResponse), ...errorResponses(404) },
      },
    },
    async (request) => ok(await getApiKey(db(), managerOf(request), request.params.uuid, request.query.include_deleted)),
  );

  app.post(
    '/api_keys',
    {
      config: WITH_SECRET,
      schema: {
        tags: [TAG],
        operationId: 'createApiKey',
        summary: 'Create an API key',
        description:
          "The key belongs to the calling key's user and company. `scopes` is required and may hold only scopes the calling " +
          'key holds (400 otherwise); a test key creates test keys only. The answer carries `api_key`, the secret, shown ' +
          'only this once.',
        security: SECURITY,
        body: CreateApiKeyBody,
        response: { 200: okSchema(ApiKeyWithSecret), ...errorResponses(409, 413) },
      },
    },
    async (request) => ok(await createApiKey(db(), managerOf(request), request.body)),
  );

  // PUT and PATCH are both partial updates on every item path (DECISIONS.md §4).
  for (const [method, operationId] of [['PUT', 'updateApiKey'], ['PATCH', 'patchApiKey']] as const) {
    app.route({
      method,
      url: '/api_keys/:uuid',
      config: { ...WRITE, etag: true },
      schema: {
        tags: [TAG],
        operationId,
        summary: `Update an API key (${method}; partial)`,
        description:
          'Changes name, scopes, allowed_ips or expires_at; absent fields are unchanged, null clears name or expires_at. ' +
          'Only a key within the calling key\'s scopes can be changed, and only to scopes the calling key holds (400 ' +
          'otherwise). Every instance applies the change within 5 seconds.',
        security: SECURITY,
        params: UuidParams,
        body: UpdateApiKeyBody,
        response: { 200: okSchema(ApiKeyResponse), ...errorResponses(404, 413) },
      },
      handler: async (request) => {
        const key = await updateApiKey(db(), managerOf(request), request.params.uuid, request.body);
        app.forgetApiKey(key.uuid);
        return ok(key);
      },
    });
  }

  app.delete(
    '/api_keys/:uuid',
    {
      config: WRITE,
      schema: {
        tags: [TAG],
        operationId: 'deleteApiKey',
        summary: 'Revoke an API key',
        description:
          'Sets revoked_at: the key, and an old secret still in its grace period, answer 401 within 5 seconds on every ' +
          "instance. Only a key within the calling key's scopes can be revoked (400 otherwise). The key stays listed with include_deleted=true.",
        security: SECURITY,
        params: UuidParams,
        response: { 200: MessageSchema.describe('The key is revoked; `data.message` confirms it.'), ...errorResponses(404) },
      },
    },
    async (request) => {
      await revokeApiKey(db(), managerOf(request), request.params.uuid);
      app.forgetApiKey(request.params.uuid);
      return ok({ message: 'API key revoked successfully' });
    },
  );

  app.post(
    '/api_keys/:uuid/roll',
    {
      config: WITH_SECRET,
      schema: {
        tags: [TAG],
        operationId: 'rollApiKey',
        summary: 'Roll an API key: a new secret',
        description:
          'Answers the key with a new secret in `api_key` (shown only this once) and its new key_prefix. The old secret ' +
          'keeps working for grace_seconds (default 0: it stops at once), then answers 401. For a rotation without ' +
          'downtime: roll with a grace period, deploy the new secret, and let the old one run out. Only a key within the ' +
          "calling key's scopes can be rolled (400 otherwise).",
        security: SECURITY,
        params: UuidParams,
        body: RollApiKeyBody.nullish(),
        response: { 200: okSchema(ApiKeyWithSecret).describe('The key with its new secret.'), ...errorResponses(404, 409, 413) },
      },
    },
    async (request) => {
      const key = await rollApiKey(db(), managerOf(request), request.params.uuid, request.body?.grace_seconds ?? 0);
      app.forgetApiKey(key.uuid);
      return ok(key);
    },
  );
};
