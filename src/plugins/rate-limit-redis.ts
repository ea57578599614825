import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { Redis } from 'ioredis';

/** How long a start waits for Redis before serving without it (it keeps reconnecting in the background). */
const CONNECT_WAIT_MS = 2_000;
/** A Redis that stops answering costs a request at most this long before the request is counted locally. */
const COMMAND_TIMEOUT_MS = 500;
/** At most one warning per this interval while Redis is unreachable. */
const WARN_EVERY_MS = 30_000;

/** One fixed window per key: the first request of a window sets its expiry. Returns [count, ms left]. */
const INCREMENT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {current, ttl}
`;

type Result = { current: number; ttl: number };
type RedisWithIncrement = Redis & { rateLimitIncrement(key: string, windowMs: number): Promise<[number, number]> };

/** The same fixed window in this process only: what an instance counts while Redis cannot be reached. */
export class LocalWindows {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  private sweptAt = Date.now();

  incr(key: string, windowMs: number): Result {
    const now = Date.now();
    if (now - this.sweptAt > windowMs) {
      for (const [name, window] of this.windows) if (window.endsAt <= now) this.windows.delete(name);
      this.sweptAt = now;
    }
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { count: 0, endsAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { current: window.count, ttl: window.endsAt - now };
  }
}

/**
 * The per-key rate-limit store when REDIS_URL is set, so every instance counts against the same window.
 * Commands are never queued while disconnected: when Redis cannot answer, the request is counted in this
 * process instead (the limit then holds per instance, looser but never down) and a warning is logged.
 */
export async function redisRateLimitStore(app: FastifyInstance, url: string, prefix: string): Promise<FastifyRateLimitStoreCtor> {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_WAIT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  }) as RedisWithIncrement;
  redis.defineCommand('rateLimitIncrement', { numberOfKeys: 1, lua: INCREMENT });
  let warnedAt = 0;
  const warn = (error: unknown) => {
    if (Date.now() - warnedAt < WARN_EVERY_MS) return;
    warnedAt = Date.now();
    app.log.warn({ err: error }, 'Redis for rate limits unreachable; each instance counts on its own until it answers');
  };
  redis.on('error', warn);
  redis.on('ready', () => {
    if (warnedAt) app.log.info('Redis for rate limits answers again');
    warnedAt = 0;
  });
  app.addHook('onClose', async () => {
    redis.disconnect();
  });
  await Promise.race([
    once(redis, 'ready'),
    once(redis, 'error'),
    new Promise((resolve) => setTimeout(resolve, CONNECT_WAIT_MS).unref()),
  ]).catch(() => undefined);

  const local = new LocalWindows();
  class SharedStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: Result) => void, timeWindow: number) {
      redis.rateLimitIncrement(`${prefix}${key}`, timeWindow).then(
        ([current, ttl]) => callback(null, { current, ttl }),
        (error: unknown) => {
          warn(error);
          callback(null, local.incr(key, timeWindow));
        },
      );
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  }
  return SharedStore;
}
