import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SECURITY } from '../../shared/openapi.js';
import { errorResponses, ok, okSchema } from '../../shared/envelope.js';
import { CompanyResponse } from './companies.schemas.js';
import { getCompany } from './companies.service.js';

export const companyRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/companies/me',
    {
      config: { scope: 'company:read', etag: true },
      schema: {
        tags: ['Company'],
        operationId: 'getCurrentCompany',
        summary: 'The company of the API key',
        security: SECURITY,
        querystring: z.strictObject({}),
        response: { 200: okSchema(CompanyResponse), ...errorResponses(404) },
      },
    },
    async (request) => ok(await getCompany(app.deps.database.db, request.principal.companyId)),
  );
};
