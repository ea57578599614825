import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { UuidParams } from '../../shared/crud-routes.js';
import { SECURITY } from '../../shared/openapi.js';
import { errorResponses, okJson, okSchema, sendJson } from '../../shared/envelope.js';
import { EventResponse, EventsPage, ListEventsQuery } from './events.schemas.js';
import { getEvent, listEvents } from './events.service.js';

const TAG = 'Events';

const FEED_DESCRIPTION =
  'The change feed, oldest first. Follow it by asking again with `after` = the uuid of the last event you have: ' +
  'you never miss an event nor see one twice, even while many transactions commit out of order (an event appears ' +
  'once every transaction of this API that started before it has ended, normally within 2 seconds of its commit; nothing ' +
  'else running on the database server delays it). A page holds at most `limit` events and 1 MiB of event JSON: it stops ' +
  'before the event that would pass 1 MiB (it always holds at least one) with has_more true. Events are ' +
  'kept EVENT_RETENTION_DAYS (default 30); an `after` that is unknown, another company\'s or no longer kept is 400.';

export const eventRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const db = () => app.deps.database.db;

  app.get(
    '/events',
    {
      config: { scope: 'events:read' },
      schema: {
        tags: [TAG],
        operationId: 'listEvents',
        summary: 'List events (the change feed)',
        description: FEED_DESCRIPTION,
        security: SECURITY,
        querystring: ListEventsQuery,
        response: { 200: okSchema(EventsPage), ...errorResponses() },
      },
    },
    async (request, reply) => {
      const page = await listEvents(db(), request.principal.companyId, request.query, app.deps.config.EVENT_RETENTION_DAYS);
      return sendJson(reply, okJson(`{"events":${page.eventsJson},"has_more":${page.hasMore}}`));
    },
  );

  app.get(
    '/events/:uuid',
    {
      config: { scope: 'events:read', etag: true },
      schema: {
        tags: [TAG],
        operationId: 'getEvent',
        summary: 'Get an event',
        description: 'One event of the company; 404 when unknown, another company\'s or no longer kept.',
        security: SECURITY,
        params: UuidParams,
        response: { 200: okSchema(EventResponse), ...errorResponses(404) },
      },
    },
    async (request, reply) => sendJson(reply, okJson(await getEvent(db(), request.principal.companyId, request.params.uuid, app.deps.config.EVENT_RETENTION_DAYS))),
  );
};
