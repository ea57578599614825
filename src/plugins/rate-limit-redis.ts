import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import { LocalWindows, type WindowCount } from './local-windows.js';

/** How long a start waits for Redis before serving without it (it keeps reconnecting in the background). */
const CONNECT_WAIT_MS = 2_000;
/** A Redis that stops answering costs the requests waiting on it at that moment at most this long. */
export const COMMAND_TIMEOUT_MS = 500;
/** After a failure, how long requests count locally before a background PING asks whether Redis answers again. */
export const PROBE_EVERY_MS = 3_000;
/**
 * A failure after this long without one is probed at once: a command can time out because this process's
 * event loop stalled (a long collection, a busy host) while Redis answered in time, and such a failure should
 * not cost the instance's share of the window for PROBE_EVERY_MS. A failure sooner than that waits the interval,
 * so a Redis that answers PING but not the increment is not asked on every request.
 */
export const QUIET_BEFORE_QUICK_PROBE_MS = 30_000;
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

type RedisWithIncrement = Redis & { rateLimitIncrement(key: string, windowMs: number): Promise<[number, number]> };

export interface CircuitOptions {
  /** Asks the shared store whether it answers again (a PING); resolves when it does. */
  probe: () => Promise<unknown>;
  probeEveryMs: number;
  onOpen: (error: unknown) => void;
  onClose: () => void;
}

/**
 * Whether requests ask Redis at all. Closed: they do. Open, from the first failed or timed-out command or lost
 * connection on: every request is counted locally at once, and the requests already waiting on Redis stop
 * waiting. A hung Redis (one that accepts and never answers) so costs one command timeout, not one per request.
 * Half-open: a PING goes out in the background, never on a request's time, at once when the circuit had not
 * opened for QUIET_BEFORE_QUICK_PROBE_MS, then every `probeEveryMs`; its answer closes the circuit.
 */
export class RedisCircuit {
  private open = false;
  private stopped = false;
  /** When the circuit last opened; -Infinity until it does. */
  private openedAt = Number.NEGATIVE_INFINITY;
  private probeTimer: NodeJS.Timeout | undefined;
  private readonly waiting = new Set<() => void>();

  constructor(private readonly options: CircuitOptions) {}

  get isOpen(): boolean {
    return this.open;
  }

  /** The shared answer while the circuit is closed; the local one when it is open or opens meanwhile. */
  call<T>(shared: () => Promise<T>, local: () => T): Promise<T> {
    if (this.open) return Promise.resolve(local());
    return new Promise<T>((resolve) => {
      let settled = false;
      const settle = (answer: () => T) => {
        if (settled) return;
        settled = true;
        this.waiting.delete(fallBack);
        resolve(answer());
      };
      const fallBack = () => settle(local);
      this.waiting.add(fallBack);
      shared().then(
        (value) => settle(() => value),
        (error: unknown) => {
          this.trip(error);
          fallBack();
        },
      );
    });
  }

  /** Opens the circuit (a no-op when open): the waiting requests go local now, a probe follows later. */
  trip(error: unknown): void {
    if (this.open || this.stopped) return;
    const quiet = Date.now() - this.openedAt >= QUIET_BEFORE_QUICK_PROBE_MS;
    this.open = true;
    this.openedAt = Date.now();
    this.options.onOpen(error);
    for (const fallBack of [...this.waiting]) fallBack();
    this.scheduleProbe(quiet ? 0 : this.options.probeEveryMs);
  }

  /** Redis has just become ready on a new connection: probe now instead of at the next interval. */
  probeNow(): void {
    if (this.open && !this.stopped) this.scheduleProbe(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.probeTimer);
  }

  private scheduleProbe(delayMs: number) {
    clearTimeout(this.probeTimer);
    this.probeTimer = setTimeout(() => {
      this.options.probe().then(
        () => this.close(),
        () => {
          if (this.open && !this.stopped) this.scheduleProbe(this.options.probeEveryMs);
        },
      );
    }, delayMs);
    this.probeTimer.unref();
  }

  private close() {
    if (!this.open || this.stopped) return;
    this.open = false;
    clearTimeout(this.probeTimer);
    this.options.onClose();
  }
}

/**
 * The per-key rate-limit store when REDIS_URL is set, so every instance counts against the same window.
 * Commands are never queued while disconnected, and a circuit (RedisCircuit) keeps a dead or hung Redis off
 * the requests' path: meanwhile each request is counted in this process (the limit then holds per instance,
 * looser but never down) and a warning is logged.
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
  const circuit = new RedisCircuit({
    probe: () => redis.ping(),
    probeEveryMs: PROBE_EVERY_MS,
    onOpen: (error) => {
      if (Date.now() - warnedAt < WARN_EVERY_MS) return;
      warnedAt = Date.now();
      app.log.warn({ err: error }, 'Redis for rate limits unreachable; each instance counts on its own until it answers');
    },
    onClose: () => app.log.info('Redis for rate limits answers again'),
  });
  redis.on('error', (error: unknown) => circuit.trip(error));
  redis.on('close', () => circuit.trip(new Error('connection to Redis closed')));
  redis.on('ready', () => circuit.probeNow());
  app.addHook('onClose', async () => {
    circuit.stop();
    redis.disconnect();
  });
  await Promise.race([
    once(redis, 'ready'),
    once(redis, 'error'),
    new Promise((resolve) => setTimeout(resolve, CONNECT_WAIT_MS).unref()),
  ]).catch(() => undefined);
  if (redis.status !== 'ready') circuit.trip(new Error(`Redis not ready within ${CONNECT_WAIT_MS} ms (${redis.status})`));

  const local = new LocalWindows();
  class SharedStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: WindowCount) => void, timeWindow: number) {
      circuit
        .call(
          async () => {
            const [current, ttl] = await redis.rateLimitIncrement(`${prefix}${key}`, timeWindow);
            return { current, ttl };
          },
          () => local.incr(key, timeWindow),
        )
        .then((result) => callback(null, result));
    }

    child(): FastifyRateLimitStore {
      return this;
    }
  }
  return SharedStore;
}
