import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { actorOf } from '../../auth/principal.js';
import { SECURITY } from '../../shared/openapi.js';
import { errorResponses, MessageSchema, ok } from '../../shared/envelope.js';
import { NumberingResponse, UpdateNumberingBody } from './numbering.schemas.js';
import { getNumbering, updateNumbering } from './numbering.service.js';

export const numberingRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/numbering',
    {
      config: { scope: 'numbering:read', addon: 'numbering', etag: true },
      schema: {
        tags: ['Numbering'],
        operationId: 'getNumbering',
        summary: 'Invoice and estimate numbering settings',
        description: 'next_number and next_number_formatted show the number the next document gets, override included.',
        security: SECURITY,
        response: { 200: NumberingResponse, ...errorResponses() },
      },
    },
    async (request) => ok(await getNumbering(app.deps.database.db, request.principal.companyId)),
  );

  app.put(
    '/numbering',
    {
      config: { scope: 'numbering:write', addon: 'numbering' },
      schema: {
        tags: ['Numbering'],
        operationId: 'updateNumbering',
        summary: 'Change numbering settings',
        description:
          'Every field is optional; only supplied fields change. Defaults: INV- / EST-, padding 4, next number 1. ' +
          'override_next_number is used by the next document only, then numbering continues at max(next_number, override + 1). ' +
          'Numbers are never reused: an override equal to a number already used (deleted documents included) is 400. ' +
          'With If-Match (the ETag of GET /numbering), the change applies only while the settings are still those (412 otherwise).',
        security: SECURITY,
        // Every field optional, so the body may be omitted too (DECISIONS §8): nothing changes.
        body: UpdateNumberingBody.nullish(),
        response: { 200: MessageSchema, ...errorResponses(413) },
      },
    },
    async (request) => {
      await updateNumbering(app.deps.database.db, actorOf(request), request.body ?? {});
      return ok({ message: 'Numbering settings updated successfully' });
    },
  );
};
