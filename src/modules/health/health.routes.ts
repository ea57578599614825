import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, DatabaseUnavailableError } from '../../errors.js';
import { errorResponses, okSchema } from '../../shared/envelope.js';

const HealthResponse = okSchema(z.object({ status: z.string().meta({ example: 'ok' }) }).meta({ id: 'HealthStatus' }));

/** Liveness and readiness; no API key needed. */
export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['Health'],
        operationId: 'liveness',
        summary: 'Liveness: the process is up',
        security: [],
        response: { 200: HealthResponse },
      },
    },
    async () => ({ success: true as const, data: { status: 'ok' } }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Health'],
        operationId: 'readiness',
        summary: 'Readiness: the database answers and the server is not shutting down',
        security: [],
        response: { 200: HealthResponse, 503: errorResponses()[503] },
      },
    },
    async () => {
      if (app.lifecycle.shuttingDown) throw new AppError('service_unavailable', 'The server is shutting down.');
      try {
        await app.deps.database.ping();
      } catch {
        throw new DatabaseUnavailableError('The database is unavailable.');
      }
      return { success: true as const, data: { status: 'ready' } };
    },
  );
};
