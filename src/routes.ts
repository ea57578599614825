import type { FastifyPluginAsync } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { z } from 'zod';
import { AppError } from './errors.js';
import { authPlugin } from './plugins/auth.js';
import { etagPlugin } from './plugins/etag.js';
import { idempotencyPlugin } from './plugins/idempotency.js';
import { jsonBodyPlugin } from './plugins/json-body.js';
import { sendNoRoute } from './plugins/errors.js';
import { companyRoutes } from './modules/companies/companies.routes.js';
import { customerRoutes } from './modules/customers/customers.routes.js';
import { locationRoutes } from './modules/locations/locations.routes.js';
import { userRoutes } from './modules/users/users.routes.js';
import { jobRoutes } from './modules/jobs/jobs.routes.js';
import { jobPhotoRoutes } from './modules/job-photos/job-photos.routes.js';
import { templateRoutes } from './modules/templates/templates.routes.js';
import { estimateRoutes } from './modules/estimates/estimates.routes.js';
import { invoiceRoutes } from './modules/invoices/invoices.routes.js';
import { paymentRoutes } from './modules/payments/payments.routes.js';
import { numberingRoutes } from './modules/numbering/numbering.routes.js';
import { webhookRoutes } from './modules/webhooks/webhooks.routes.js';
import { documentRoutes } from './modules/documents/documents.routes.js';
import { eventRoutes } from './modules/events/events.routes.js';
import { apiKeyRoutes } from './modules/api-keys/api-keys.routes.js';
import { sandboxRoutes } from './modules/companies/sandbox.routes.js';
import { visitRoutes } from './modules/visits/visits.routes.js';
import { timeOffRoutes } from './modules/time-off/time-off.routes.js';
import { availabilityRoutes } from './modules/schedule/availability.routes.js';
import { calendarLinkRoutes } from './modules/calendar/calendar-links.routes.js';

const NO_QUERY = z.strictObject({});

/** Everything under /api/v1: authenticated, rate limited, then the resource routes. */
export const apiRoutes: FastifyPluginAsync = async (app) => {
  const { config, database, usage, lastUsed } = app.deps;
  // Unknown query parameters are 400 on every route, also on those that take none.
  app.addHook('onRoute', (route) => {
    if (route.schema && !route.schema.querystring && !route.schema.hide) {
      route.schema = { ...route.schema, querystring: NO_QUERY };
    }
  });
  await app.register(authPlugin, {
    db: database.db,
    usage,
    lastUsed,
    cacheTtlMs: config.AUTH_CACHE_TTL_MS,
    unauthenticatedPerMinute: config.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE,
  });
  if (config.RATE_LIMIT_PER_MINUTE > 0) {
    await app.register(rateLimit, {
      max: config.RATE_LIMIT_PER_MINUTE,
      timeWindow: 60_000,
      keyGenerator: (request) => request.principal?.apiKeyId ?? request.ip,
      // Per key across all instances when they share Redis (its client is loaded only then).
      ...(config.REDIS_URL ? { store: await (await import('./plugins/rate-limit-redis.js')).redisRateLimitStore(app, config.REDIS_URL, 'crm-rate-limit:') } : {}),
      errorResponseBuilder: (_request, context) => {
        return new AppError(
          'rate_limited',
          `Rate limit of ${context.max} requests per minute exceeded; retry in ${Math.ceil(context.ttl / 1000)} s.`,
        );
      },
    });
  }
  // An unknown path or method inside /api/v1 needs a key too, and counts against its rate: 401, the 403s and 429
  // before 404 or 405 (DECISIONS.md §1's order of checks).
  app.setNotFoundHandler(config.RATE_LIMIT_PER_MINUTE > 0 ? { preHandler: app.rateLimit() } : {}, sendNoRoute);

  await app.register(jsonBodyPlugin);
  await app.register(idempotencyPlugin, { db: database.db });
  await app.register(etagPlugin);

  await app.register(companyRoutes);
  await app.register(userRoutes);
  await app.register(locationRoutes);
  await app.register(customerRoutes);
  await app.register(jobRoutes);
  await app.register(jobPhotoRoutes);
  await app.register(templateRoutes);
  await app.register(estimateRoutes);
  await app.register(invoiceRoutes);
  await app.register(paymentRoutes);
  await app.register(numberingRoutes);
  await app.register(webhookRoutes);
  await app.register(documentRoutes);
  await app.register(eventRoutes);
  await app.register(apiKeyRoutes);
  await app.register(sandboxRoutes);
  await app.register(visitRoutes);
  await app.register(timeOffRoutes);
  await app.register(availabilityRoutes);
  await app.register(calendarLinkRoutes);
};
