import Fastify, { LogController, type FastifyServerOptions } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { randomTimeOrderedId } from './shared/ids.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
// Before the other schemas, so the OpenAPI components keep their order (the document lists them as first loaded).
import './modules/webhooks/webhooks.schemas.js';
import { UsageMeter } from './modules/auth/usage-meter.js';
import { LastUsedRecorder } from './modules/auth/last-used.js';
import cors from '@fastify/cors';
import { clientErrorHandler, errorsPlugin, frameworkErrorHandler, validatorCompiler } from './plugins/errors.js';
import { databasePlugin } from './plugins/database.js';
import { jsonParserPlugin } from './plugins/json-body.js';
import { applyConnectionRules, hostRequiredPlugin } from './plugins/http-connections.js';
import { eventRetentionPlugin } from './plugins/event-retention.js';
import { idempotencyPurgePlugin } from './plugins/idempotency-purge.js';
import { lifecyclePlugin } from './plugins/lifecycle.js';
import { securityHeadersPlugin } from './plugins/security-headers.js';
import { usagePlugin } from './plugins/usage.js';
import { deliveryWorkerPlugin } from './plugins/webhook-delivery.js';
import { metricsPlugin } from './plugins/metrics.js';
import { loggerOptions, requestLogPlugin } from './plugins/request-log.js';
import { lazyChildLoggerFactory } from './plugins/lazy-logger.js';
import { swaggerPlugin } from './plugins/swagger.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { photoFileRoutes } from './modules/job-photos/photo-files.routes.js';
import { apiRoutes } from './routes.js';
// After the API routes, so the OpenAPI components keep their order.
import { shareRoutes } from './modules/documents/share.routes.js';
import { calendarFeedRoutes } from './modules/calendar/calendar-feed.routes.js';
import { useRecordedTypes } from './modules/changes/change-recorder.js';
import { RECORDED_TYPES } from './modules/events/recorded-types.js';
import type { Storage } from './storage/storage.js';
import { createStorage } from './storage/create-storage.js';
import type { ResolveHost } from './modules/webhooks/address-safety.js';
import { documentRendererPlugin } from './modules/documents/document-renderer.plugin.js';
import { photoOrphanSweepPlugin } from './modules/job-photos/orphan-sweep.plugin.js';

/** A client's request id the API echoes: what HAProxy's frontend keeps too (deploy/haproxy.cfg). */
export const CLIENT_REQUEST_ID = /^[^"\\\x00-\x1f\x7f]{1,255}$/;

export interface AppDeps {
  config: Config;
  database: Database;
  storage?: Storage;
  logger?: FastifyServerOptions['logger'];
  /** The app closes the database last when it closes (the server); false when the database is shared. */
  ownsDatabase?: boolean;
  /** How webhook url hosts are resolved (default dns.lookup); tests inject answers. */
  resolveHost?: ResolveHost;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: Required<Pick<AppDeps, 'config' | 'database'>> &
      Pick<AppDeps, 'resolveHost'> & { storage: Storage; usage: UsageMeter; lastUsed: LastUsedRecorder };
  }
}

function trustProxySetting(value: string | undefined): boolean | string | ((address: string, hop: number) => boolean) {
  // `true` is refused by the configuration (any client could choose its address).
  if (value === undefined || value === 'false') return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_address, hop) => hop < hops;
  }
  return value;
}

/** The application instance, typed with its zod type provider. */
export type App = Awaited<ReturnType<typeof buildApp>>;

/** Builds the application: plugins, then routes. Never listens, so tests build it too. */
export async function buildApp(deps: AppDeps) {
  const { config, database } = deps;
  const app = Fastify({
    logger: deps.logger ?? loggerOptions(config),
    // A client's x-request-id is echoed (DECISIONS §1) when it is 1-255 characters without a quote, a backslash
    // or a control character (it is written into JSON bodies and headers as it is); otherwise the server makes one.
    requestIdHeader: false,
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomTimeOrderedId();
    },
    logController: new LogController({ disableRequestLogging: true }),
    // Request loggers are made on their first line written (src/plugins/lazy-logger.ts).
    childLoggerFactory: lazyChildLoggerFactory,
    bodyLimit: config.BODY_LIMIT_BYTES,
    // A client that trickles or stalls a request (an upload) is cut off instead of holding a connection.
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    trustProxy: trustProxySetting(config.TRUST_PROXY),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    return503OnClosing: true,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();

  if (config.NODE_ENV === 'production' && !config.PUBLIC_BASE_URL) {
    app.log.warn('PUBLIC_BASE_URL is not set: absolute links are built from the Host header of each request; set it in production');
  }
  if (config.NODE_ENV === 'production' && !config.PHOTO_URL_SECRET) {
    // A per-process secret (the server uses the database's when it can): share links die on restart and links
    // signed by one instance fail on another.
    app.log.warn('PHOTO_URL_SECRET is not set: photo and share links are signed with a per-process secret; set the same value on every instance');
  }

  const usage = new UsageMeter(
    database.db,
    config.USAGE_FLUSH_INTERVAL_MS,
    (error) => app.log.warn({ err: error }, 'usage flush failed'),
    config.USAGE_IDLE_EVICT_MS,
  );
  const lastUsed = new LastUsedRecorder(database.db, undefined, (error) => app.log.warn({ err: error }, 'writing when API keys were last used failed'));

  /*
   * Background work registers here, each as a plugin of src/plugins/ that owns its start and stop: after the
   * database plugin and before the routes, never in server.ts. Shutdown, one sequence (app.close(), also on
   * SIGTERM in server.ts):
   *   1. preClose: the webhook delivery worker stops claiming and lets its attempts in flight finish;
   *   2. the server stops accepting connections and in-flight requests finish (fastify, before any onClose);
   *   3. onClose hooks run in REVERSE order of registration: event retention, the idempotency purge and the
   *      usage meter stop with their last writes (the meter's final flush, and when keys were last used);
   *   4. the database plugin, registered first, closes the pool last.
   */
  await app.register(databasePlugin, { database, owns: deps.ownsDatabase ?? false });
  await app.register(lifecyclePlugin);
  app.decorate('deps', {
    config,
    database,
    storage: deps.storage ?? (await createStorage(config)),
    usage,
    lastUsed,
    resolveHost: deps.resolveHost,
  });
  await app.register(usagePlugin, { meter: usage, lastUsed });
  await app.register(idempotencyPurgePlugin, { db: database.db, intervalMs: config.IDEMPOTENCY_PURGE_INTERVAL_MS });
  await app.register(eventRetentionPlugin, { db: database.db, retentionDays: config.EVENT_RETENTION_DAYS });
  await app.register(photoOrphanSweepPlugin, { db: database.db, storage: app.deps.storage, uploadTimeoutMs: config.UPLOAD_TIMEOUT_MS });
  await app.register(deliveryWorkerPlugin);
  await app.register(documentRendererPlugin);

  // Change data: every write records its events through one recorder, handed the recorded types here.
  useRecordedTypes(RECORDED_TYPES);

  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by the services in their documented shape; the schemas document them and
  // JSON.stringify writes them, so serialization never dominates a request.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  applyConnectionRules(app.server, config.REQUEST_TIMEOUT_MS);
  await app.register(securityHeadersPlugin);
  await app.register(requestLogPlugin);

  await app.register(errorsPlugin);
  await app.register(hostRequiredPlugin);
  await app.register(jsonParserPlugin, { requestTimeoutMs: config.REQUEST_TIMEOUT_MS });
  await app.register(metricsPlugin, { pool: database.pool });
  if (config.CORS_ORIGINS) {
    await app.register(cors, {
      origin: config.CORS_ORIGINS.split(',').map((origin) => origin.trim()),
      exposedHeaders: ['x-request-id', 'x-usage-count', 'x-usage-limit', 'x-usage-resets', 'retry-after', 'idempotent-replayed', 'etag'],
    });
  }
  await app.register(swaggerPlugin);
  await app.register(healthRoutes);
  await app.register(photoFileRoutes);
  await app.register(shareRoutes);
  await app.register(calendarFeedRoutes);
  await app.register(apiRoutes, { prefix: '/api/v1' });
  return app;
}
