import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { errorResponses, ok, okSchema } from '../../shared/envelope.js';
import { SECURITY } from '../../shared/openapi.js';
import { AvailabilityQuery, AvailabilityResponse } from './availability.schemas.js';
import { availability } from './availability.service.js';

export const availabilityRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/availability',
    {
      config: { scope: 'schedule:read' },
      schema: {
        tags: ['Visits'],
        operationId: 'getAvailability',
        summary: 'Free slots of technicians',
        description:
          'For each user, the maximal intervals inside [from, to) and inside the working hours (day_start to day_end as ' +
          'wall-clock times of each local date in time_zone, so they stay put across daylight-saving changes) that no live ' +
          'visit or time off holds and that last at least duration_minutes, earliest first. Visits that are Completed, ' +
          'Cancelled, deleted or allow_overlap hold no one. from and to at most 31 days apart.',
        security: SECURITY,
        querystring: AvailabilityQuery,
        response: { 200: okSchema(AvailabilityResponse), ...errorResponses() },
      },
    },
    async (request) => ok(await availability(app.deps.database.db, request.principal.companyId, request.query)),
  );
};
