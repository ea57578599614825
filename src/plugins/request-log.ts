import { createRequire } from 'node:module';
import fp from 'fastify-plugin';
import pino from 'pino';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';

/** The object form of Fastify's logger option. */
type FastifyLoggerOptions = Exclude<NonNullable<FastifyServerOptions['logger']>, boolean>;
import type { Config } from '../config.js';
import { redactUrl } from '../shared/urls.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The error code of a 4xx/5xx answer, for the request's log line. */
    errorCode?: string;
    /** The status of an answer written straight on the socket (answerOnSocket), not through the reply. */
    answeredOnSocket?: number;
  }
}

/** pino-pretty is a development dependency: used only when it is installed. */
function prettyAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

/**
 * A failed query's parameters (drizzle-orm's DrizzleQueryError keeps them as `params` and lists them in its
 * message, "Failed query: ...\nparams: ..."): request values (names, emails, kept answers), which the log never
 * carries (SECURITY.md, "What is logged"). The statement itself stays.
 */
function withoutQueryParams(error: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(error.params)) {
    const listed = `\nparams: ${String(error.params)}`;
    for (const field of ['message', 'stack']) {
      const text = error[field];
      if (typeof text === 'string') error[field] = text.split(listed).join('\nparams: [not logged]');
    }
  }
  delete error.params;
  const cause = error.cause;
  if (cause instanceof Error) error.cause = errorForLog(cause);
  else if (cause && typeof cause === 'object') withoutQueryParams(cause as Record<string, unknown>);
  return error;
}

/** pino's error serializer, without the parameters of a failed query. */
export function errorForLog(error: Error): SerializedError {
  return withoutQueryParams({ ...(pino.stdSerializers.err(error) as unknown as Record<string, unknown>) }) as SerializedError;
}

type SerializedError = { type: string; message: string; stack: string; [field: string]: unknown };

/**
 * The server's logger options: JSON lines with ISO timestamps, keys and query parameters never logged;
 * human-readable (pino-pretty) when a developer watches a terminal.
 */
export function loggerOptions(config: Config): FastifyLoggerOptions {
  const pretty = config.NODE_ENV === 'development' && process.stdout.isTTY === true && prettyAvailable();
  return {
    level: config.LOG_LEVEL,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]'], remove: true },
    serializers: { err: errorForLog },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:isoDateTime', ignore: 'pid,hostname' } } } : {}),
  };
}

/**
 * A request is over in one of three ways: answered (its status), cut while its answer was being written
 * (its status, aborted), or left by its client before any answer (499, nginx's "client closed request":
 * nothing was sent, so the reply's default 200 would be false).
 */
export interface RequestOutcome {
  status: number;
  aborted: boolean;
}

export const CLIENT_CLOSED_REQUEST = 499;

type DoneHandler = (request: FastifyRequest, reply: FastifyReply, outcome: RequestOutcome) => void;

const DONE = Symbol('requestDone');
/** The handlers of each server, run by one pair of hooks however many plugins ask (request log, metrics). */
const handlersOf = new WeakMap<object, DoneHandler[]>();

/**
 * Calls `handler` exactly once per request when its response is over: on onResponse, or when the
 * connection closes first. A client that closes right after the last byte of a download skips
 * onResponse; such a request is still logged and counted. However many handlers there are, a request
 * gets one close listener and one onResponse hook.
 */
export function onRequestDone(app: FastifyInstance, handler: DoneHandler): void {
  const known = handlersOf.get(app.server);
  if (known) {
    known.push(handler);
    return;
  }
  const handlers = [handler];
  handlersOf.set(app.server, handlers);
  const done = (request: FastifyRequest, reply: FastifyReply) => {
    const marked = request as unknown as Record<symbol, boolean>;
    if (marked[DONE]) return;
    marked[DONE] = true;
    const onSocket = request.answeredOnSocket;
    const aborted = onSocket === undefined && !reply.raw.writableFinished;
    const outcome = { aborted, status: onSocket ?? (aborted && !reply.raw.headersSent ? CLIENT_CLOSED_REQUEST : reply.statusCode) };
    for (const each of handlers) each(request, reply, outcome);
  };
  app.addHook('onRequest', (request, reply, next) => {
    reply.raw.once('close', () => done(request, reply));
    next();
  });
  app.addHook('onResponse', (request, reply, next) => {
    done(request, reply);
    next();
  });
}

/** One log line per request: method, URL, status, time, the error code of a refusal; never headers or bodies. */
export const requestLogPlugin = fp(
  async (app) => {
    app.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode >= 400 && typeof payload === 'string') {
        const match = /"code":"([a-z_]+)"/.exec(payload.slice(0, 200));
        if (match) request.errorCode = match[1];
      }
      done(null, payload);
    });
    onRequestDone(app, (request, reply, { status, aborted }) => {
      // Below the level the line is not even assembled.
      const log = request.log as typeof request.log & { isLevelEnabled?(level: string): boolean };
      if (log.isLevelEnabled && !log.isLevelEnabled('info')) return;
      request.log.info(
        {
          method: request.method,
          url: redactUrl(request.url),
          status,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          ...(request.errorCode ? { error_code: request.errorCode } : {}),
          ...(aborted ? { aborted: true } : {}),
        },
        'request completed',
      );
    });
  },
  { name: 'request-log' },
);
