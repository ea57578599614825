import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { serializerCompiler as _zodSerializer, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { v7 as uuidv7 } from 'uuid';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { UsageMeter } from './modules/auth/usage-meter.js';
import { EventRetention } from './modules/events/event-retention.js';
import cors from '@fastify/cors';
import { errorsPlugin, frameworkErrorHandler } from './plugins/errors.js';
import { metricsPlugin } from './plugins/metrics.js';
import { swaggerPlugin } from './plugins/swagger.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { photoFileRoutes } from './modules/job-photos/photo-files.routes.js';
import { apiRoutes } from './routes.js';
import type { Storage } from './storage/storage.js';
import { createStorage } from './storage/create-storage.js';

/** How often expired events are looked for. */
const EVENT_CLEANUP_INTERVAL_MS = 10 * 60 * 1000;

export interface AppDeps {
  config: Config;
  database: Database;
  storage?: Storage;
  logger?: FastifyServerOptions['logger'];
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: Required<Pick<AppDeps, 'config' | 'database'>> & { storage: Storage; usage: UsageMeter; shuttingDown: boolean };
  }
}

void _zodSerializer;

function trustProxySetting(value: string | undefined): boolean | string | ((address: string, hop: number) => boolean) {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_address, hop) => hop < hops;
  }
  return value;
}

/** Builds the application: plugins, then routes. Never listens, so tests build it too. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  return buildZodApp(deps) as unknown as FastifyInstance;
}

async function buildZodApp(deps: AppDeps) {
  const { config, database } = deps;
  const app = Fastify({
    logger: deps.logger ?? {
      level: config.LOG_LEVEL,
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]'], remove: true },
    },
    // A client's x-request-id is kept when it is a sane token; otherwise the server makes one.
    requestIdHeader: false,
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && /^[\w.:\-]{1,128}$/.test(sent) ? sent : uuidv7();
    },
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    // A client that trickles or stalls a request (an upload) is cut off instead of holding a connection.
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    trustProxy: trustProxySetting(config.TRUST_PROXY),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    return503OnClosing: true,
    frameworkErrors: frameworkErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();

  const usage = new UsageMeter(database.db, config.USAGE_FLUSH_INTERVAL_MS, (error) =>
    app.log.warn({ err: error }, 'usage flush failed'),
  );
  app.decorate('deps', { config, database, storage: deps.storage ?? (await createStorage(config)), usage, shuttingDown: false });
  usage.start();
  app.addHook('onClose', async () => {
    await usage.stop().catch((error) => app.log.warn({ err: error }, 'final usage flush failed'));
  });
  // Old events are deleted in small batches in the background; stopped (and awaited) on close, before
  // the caller closes the database.
  const retention = new EventRetention(database.db, config.EVENT_RETENTION_DAYS, EVENT_CLEANUP_INTERVAL_MS, (error) =>
    app.log.warn({ err: error }, 'event cleanup failed'),
  );
  retention.start();
  app.addHook('onClose', async () => {
    await retention.stop();
  });

  app.setValidatorCompiler(validatorCompiler);
  // Responses are built by the services in their documented shape; the schemas document them and
  // JSON.stringify writes them, so serialization never dominates a request.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // One log line per request, without headers or bodies.
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request completed',
    );
  });
  app.addHook('onSend', async (_request, reply) => {
    // While shutting down, in-flight responses close their connection so the server can exit promptly.
    if (app.deps.shuttingDown) reply.header('connection', 'close');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cache-control', reply.getHeader('cache-control') ?? 'no-store');
  });

  await app.register(errorsPlugin);
  await app.register(metricsPlugin, { pool: database.pool });
  if (config.CORS_ORIGINS) {
    await app.register(cors, {
      origin: config.CORS_ORIGINS.split(',').map((origin) => origin.trim()),
      exposedHeaders: ['x-request-id', 'x-usage-count', 'x-usage-limit', 'x-usage-resets', 'retry-after', 'idempotent-replayed'],
    });
  }
  await app.register(swaggerPlugin);
  await app.register(healthRoutes);
  await app.register(photoFileRoutes);
  await app.register(apiRoutes, { prefix: '/api/v1' });
  return app;
}
