import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../errors.js';
// Without REDIS_URL, ioredis is never loaded.
import { LocalWindows } from './local-windows.js';

/** Redis keys of the keyless limit, apart from the per-key limit's. */
const REDIS_PREFIX = 'crm-keyless-rate-limit:';
const WINDOW_MS = 60_000;

export interface KeylessRateLimitOptions {
  /**
   * Answers a refused request of the group in HTML (a page a browser shows) and returns the reply, or
   * returns undefined for the JSON envelope (scripts, PDFs).
   */
  htmlAnswer?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;
}

/**
 * The counters of one app, shared by every keyless route group that registers the limit, so a client has
 * one allowance across all of them: in Redis when REDIS_URL is set (the whole cluster's), else in this
 * process.
 */
const storesByApp = new WeakMap<object, Promise<FastifyRateLimitStoreCtor>>();

function sharedStore(app: FastifyInstance): Promise<FastifyRateLimitStoreCtor> {
  let store = storesByApp.get(app.deps);
  if (!store) {
    const url = app.deps.config.REDIS_URL;
    store = url ? import('./rate-limit-redis.js').then(({ redisRateLimitStore }) => redisRateLimitStore(app, url, REDIS_PREFIX)) : Promise.resolve(localStore());
    storesByApp.set(app.deps, store);
  }
  return store;
}

function localStore(): FastifyRateLimitStoreCtor {
  const windows = new LocalWindows();
  return class SharedLocalStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number) {
      callback(null, windows.incr(key, timeWindow));
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

/**
 * The one limit of the routes served without a key (DECISIONS §11, §12): SHARE_RATE_LIMIT_PER_MINUTE
 * requests a minute per client address (TRUST_PROXY decides the address), counted together over every
 * keyless route group; beyond it 429 `rate_limited` with Retry-After. A keyless route group registers
 * this plugin before its routes; 0 turns the limit off.
 */
export const keylessRateLimitPlugin = fp<KeylessRateLimitOptions>(
  async (app, options) => {
    const max = app.deps.config.SHARE_RATE_LIMIT_PER_MINUTE;
    if (max === 0) return;
    await app.register(rateLimit, {
      max,
      timeWindow: WINDOW_MS,
      keyGenerator: (request) => request.ip,
      store: await sharedStore(app),
      errorResponseBuilder: (_request, context) =>
        new AppError(
          'rate_limited',
          `Too many requests from this address: at most ${context.max} a minute to pages served without a key; retry in ${Math.ceil(context.ttl / 1000)} s.`,
        ),
    });
    const { htmlAnswer } = options;
    if (!htmlAnswer) return;
    const inherited = app.errorHandler;
    app.setErrorHandler(function keylessErrors(error, request, reply) {
      if (error instanceof AppError && error.code === 'rate_limited') {
        const answered = htmlAnswer(request, reply.status(429));
        if (answered) return answered;
      }
      return inherited.call(this, error, request, reply);
    });
  },
  { name: 'keyless-rate-limit' },
);
