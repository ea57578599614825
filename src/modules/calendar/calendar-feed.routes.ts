import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { keylessRateLimitPlugin } from '../../plugins/keyless-rate-limit.js';
import { ErrorSchema } from '../../shared/envelope.js';
import { requestLinkBase } from '../../shared/urls.js';
import { calendarFeed, FEED_MAX_VISITS } from './calendar.service.js';

const FeedParams = z.strictObject({
  token: z.string().max(300).describe('The token of a calendar link.').meta({ example: 'q2Xh0e6w9oZbB2m7u6h0kXrW3m1Yc8pQeLrN4tVxJ5s' }),
});

const json = (description: string) => ({ description, content: { 'application/json': { schema: ErrorSchema } } });

/**
 * Technicians' calendar feeds, outside /api/v1 and without a key: the token in the path is the only
 * credential, looked up on every request so that a revoked link is 404 at once on every instance.
 */
export const calendarFeedRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  // One allowance per client address over every keyless route (share pages and feeds together).
  await app.register(keylessRateLimitPlugin);
  app.get(
    '/calendar/:token',
    {
      schema: {
        tags: ['Calendar feeds'],
        operationId: 'getCalendarFeed',
        summary: "A technician's calendar feed",
        description:
          'RFC 5545 text (no key; the token is the credential) for a phone calendar to subscribe to: one VEVENT per visit of the ' +
          'user that is not deleted and ended no more than 30 days ago (Completed ones included, cancelled ones with STATUS ' +
          `CANCELLED), at most ${FEED_MAX_VISITS}, earliest first. UID is the visit uuid @ the host name (no port), SEQUENCE grows with every ` +
          'change. An unknown or revoked link is 404.',
        security: [],
        params: FeedParams,
        response: {
          200: { description: 'The calendar.', content: { 'text/calendar': { schema: z.string() } } },
          404: json('An unknown or revoked link (`not_found`).'),
          429: json('Too many requests from this client address to routes served without a key (`rate_limited`); retry after Retry-After seconds.'),
          503: json('A large feed is written off the request thread, and every writer is busy (`service_unavailable`); retry after the seconds in Retry-After.'),
        },
      },
    },
    async (request, reply) => {
      const host = new URL(requestLinkBase(request, app.deps.config.PUBLIC_BASE_URL)).hostname;
      // A busy renderer's 503 carries Retry-After (sendError).
      const text = await calendarFeed(app.deps.database.db, app.documentRenderer, request.params.token, host);
      return reply
        .type('text/calendar; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('content-disposition', 'inline; filename="visits.ics"')
        .send(text);
    },
  );
};
