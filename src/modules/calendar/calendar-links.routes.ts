import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../auth/principal.js';
import { errorResponses, MessageSchema, ok, okSchema } from '../../shared/envelope.js';
import { uuidString } from '../../shared/formats.js';
import { SECURITY } from '../../shared/openapi.js';
import { requestLinkBase } from '../../shared/urls.js';
import { createCalendarLink, revokeCalendarLinks } from './calendar.service.js';

const UserParams = z.strictObject({ user_id: uuidString.describe('A user of the company.') });

const CalendarLink = z
  .object({
    url: z
      .string()
      .describe('The feed: an absolute link served without a key (text/calendar). Keep it secret; it does not expire.')
      .meta({ format: 'uri', example: 'https://crm.example.com/calendar/q2Xh0e6w9oZbB2m7u6h0kXrW3m1Yc8pQeLrN4tVxJ5s' }),
  })
  .meta({ id: 'CalendarLink' });

export const calendarLinkRoutes: FastifyPluginAsyncZod = async (app) => {
  const db = () => app.deps.database.db;

  app.post(
    '/users/:user_id/calendar_link',
    {
      config: { scope: 'schedule:write', idempotency: 'atomic' },
      schema: {
        tags: ['Visits'],
        operationId: 'createCalendarLink',
        summary: "A link to a user's calendar feed",
        description:
          "An absolute link (base: PUBLIC_BASE_URL, else this request's host) to an iCalendar feed (RFC 5545) of the user's " +
          'visits that a phone calendar subscribes to, served without a key: one event per visit that is not deleted and ' +
          'ended no more than 30 days ago (cancelled ones marked CANCELLED), with the service address and instructions and ' +
          "never the customer's email or phone. The link does not expire; DELETE revokes every link of the user.",
        security: SECURITY,
        params: UserParams,
        response: { 200: okSchema(CalendarLink), ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const baseUrl = requestLinkBase(request, app.deps.config.PUBLIC_BASE_URL);
      return ok(await createCalendarLink(db(), actorOf(request), request.params.user_id, baseUrl));
    },
  );

  app.delete(
    '/users/:user_id/calendar_link',
    {
      config: { scope: 'schedule:write' },
      schema: {
        tags: ['Visits'],
        operationId: 'revokeCalendarLinks',
        summary: "Revoke a user's calendar feed links",
        description: 'Every earlier link of the user answers 404 from now on, on every instance (within 5 seconds).',
        security: SECURITY,
        params: UserParams,
        response: { 200: MessageSchema, ...errorResponses(404) },
      },
    },
    async (request) => {
      await revokeCalendarLinks(db(), request.principal.companyId, request.params.user_id);
      return ok({ message: 'Calendar links revoked' });
    },
  );
};
