import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { SECURITY } from '../../shared/openapi.js';
import { errorResponses, listSchema, ok } from '../../shared/envelope.js';
import { ListUsersQuery, UserResponse } from './users.schemas.js';
import { listCompanyUsers } from './users.service.js';

export const userRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/users',
    {
      config: { scope: 'users:read' },
      schema: {
        tags: ['Users'],
        operationId: 'listUsers',
        summary: "List the company's users",
        security: SECURITY,
        querystring: ListUsersQuery,
        response: { 200: listSchema('users', UserResponse), ...errorResponses() },
      },
    },
    async (request) => {
      const page = await listCompanyUsers(app.deps.database.db, request.principal.companyId, request.query);
      return ok({ users: page.items, pagination: page.pagination });
    },
  );
};
