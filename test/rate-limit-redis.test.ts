import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { COMMAND_TIMEOUT_MS, PROBE_EVERY_MS, QUIET_BEFORE_QUICK_PROBE_MS, RedisCircuit } from '../src/plugins/rate-limit-redis.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';
import { TcpProxy } from './helpers/tcp-proxy.js';

/**
 * The rate limit's Redis under faults: a Redis that dies, one that hangs (accepts connections and commands
 * and never answers), and one that comes back. A fault costs the requests waiting on Redis at that moment
 * one command timeout at most; after that every request is counted locally at once until Redis answers.
 */
const ctx = await buildTestApp();
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const me = '/api/v1/companies/me';
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** Another instance of the API on the test database, its rate limit in the Redis at `redisUrl`. */
async function instance(redisUrl: string, limit: number, lines?: string[]): Promise<FastifyInstance> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATA_DIR: 'memory://',
    DATABASE_URL: ctx.databaseUrl ?? '',
    RATE_LIMIT_PER_MINUTE: String(limit),
    REDIS_URL: redisUrl,
  });
  const stream = { write: (line: string) => lines?.push(line) };
  const app = await buildApp({ config, database: ctx.database, logger: { level: 'info', stream } });
  await app.ready();
  cleanups.push(() => app.close());
  return app;
}

/** A TCP listener that accepts connections and reads what they send, and never answers: a hung Redis. */
async function silentServer(): Promise<{ url: string; received: () => string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let received = '';
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  cleanups.push(close);
  return { url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`, received: () => received, close };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

const get = (app: FastifyInstance, key: string) => call(app, 'GET', me, { key });

async function waitFor(check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.runIf(ctx.databaseUrl)('rate limit: a Redis that hangs', () => {
  it('from the start: the instance starts, and no request waits for it; the limit holds per instance', async () => {
    const silent = await silentServer();
    const lines: string[] = [];
    const { ms: startMs, value: app } = await timed(() => instance(silent.url, 5, lines));
    // The start waits at most a couple of seconds for Redis, then serves without it.
    expect(startMs).toBeLessThan(5_000);
    const company = await makeCompany(ctx.database);
    const statuses: number[] = [];
    const { ms } = await timed(async () => {
      for (let i = 0; i < 7; i++) {
        const response = await get(app, company.key);
        statuses.push(response.status);
        if (response.status === 429) expect(response.body.error.code).toBe('rate_limited');
      }
    });
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    // Seven requests in turn, on average well under one command timeout: none of them waited for Redis.
    expect(ms).toBeLessThan((7 * COMMAND_TIMEOUT_MS) / 2);
    const warning = lines.map((line) => JSON.parse(line)).find((entry) => /Redis for rate limits unreachable/.test(entry.msg));
    expect(warning).toMatchObject({ level: 40 });
  });

  it('mid-way: the requests in flight wait one command timeout at most, then every request counts locally at once', async () => {
    const proxy = await TcpProxy.start(redisTarget());
    cleanups.push(() => proxy.close());
    const app = await instance(proxy.urlFor(REDIS_URL), 1_000);
    const company = await makeCompany(ctx.database);
    expect((await get(app, company.key)).headers['x-ratelimit-remaining']).toBe('999');

    proxy.blackhole();
    // Eight requests at once find Redis silent: they wait for one command timeout, then are counted locally.
    const first = await timed(() => Promise.all(Array.from({ length: 8 }, () => get(app, company.key))));
    for (const response of first.value) expect(response.status).toBe(200);
    expect(first.ms).toBeGreaterThanOrEqual(COMMAND_TIMEOUT_MS - 50);
    expect(first.ms).toBeLessThan(2 * COMMAND_TIMEOUT_MS + 500);
    // From then on no request waits for Redis: twenty in turn take less than ten timeouts would.
    const rest = await timed(async () => {
      for (let i = 0; i < 20; i++) expect((await get(app, company.key)).status).toBe(200);
    });
    expect(rest.ms).toBeLessThan(10 * COMMAND_TIMEOUT_MS);
  });
});

describe.runIf(ctx.databaseUrl)('rate limit: a Redis that dies and comes back', () => {
  it('dead from the start: every request is counted locally at once', async () => {
    const app = await instance('redis://127.0.0.1:1', 3);
    const company = await makeCompany(ctx.database);
    const { value: statuses, ms } = await timed(async () => {
      const seen: number[] = [];
      for (let i = 0; i < 5; i++) seen.push((await get(app, company.key)).status);
      return seen;
    });
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    expect(ms).toBeLessThan((5 * COMMAND_TIMEOUT_MS) / 2);
  });

  it('dies mid-way, then returns: counted locally meanwhile, shared with the other instances again once it answers', async () => {
    const proxy = await TcpProxy.start(redisTarget());
    cleanups.push(() => proxy.close());
    const throughProxy = await instance(proxy.urlFor(REDIS_URL), 1_000);
    const direct = await instance(REDIS_URL, 1_000);
    const company = await makeCompany(ctx.database);
    const remaining = async (app: FastifyInstance) => Number((await get(app, company.key)).headers['x-ratelimit-remaining']);
    // One window shared by both instances.
    expect(await remaining(throughProxy)).toBe(999);
    expect(await remaining(direct)).toBe(998);

    proxy.down();
    const whileDown = await timed(async () => {
      for (let i = 0; i < 10; i++) expect((await get(throughProxy, company.key)).status).toBe(200);
    });
    expect(whileDown.ms).toBeLessThan((10 * COMMAND_TIMEOUT_MS) / 2);
    // Those ten were counted locally: the shared window did not see them.
    expect(await remaining(direct)).toBe(997);

    proxy.up();
    // Once the client has reconnected, the next probe closes the circuit and the window is shared again.
    // (Counted locally, the proxied instance's numbers run apart from the shared ones by a constant.)
    await waitFor(async () => {
      const shared = await remaining(direct);
      return (await remaining(throughProxy)) === shared - 1;
    }, PROBE_EVERY_MS + 5_000);
    const viaProxy = await remaining(throughProxy);
    expect(await remaining(direct)).toBe(viaProxy - 1);
  }, 20_000);
});

describe('RedisCircuit', () => {
  it('opens on the first failure, answers the waiting calls locally at once, probes in the background (at once after a quiet spell), and closes on an answer', async () => {
    vi.useFakeTimers();
    try {
      let probeAnswers = false;
      const probes: number[] = [];
      const events: string[] = [];
      const circuit = new RedisCircuit({
        probe: async () => {
          probes.push(Date.now());
          if (!probeAnswers) throw new Error('no answer');
        },
        probeEveryMs: 3_000,
        onOpen: () => events.push('open'),
        onClose: () => events.push('close'),
      });
      const never = () => new Promise<string>(() => undefined);
      const hanging = circuit.call(never, () => 'local');
      const failing = circuit.call(() => Promise.reject(new Error('timeout')), () => 'local');
      // The failure opens the circuit and releases the call that was still waiting.
      await expect(failing).resolves.toBe('local');
      await expect(hanging).resolves.toBe('local');
      expect(circuit.isOpen).toBe(true);
      // While open, the shared store is not asked at all.
      const shared = vi.fn(() => Promise.resolve('shared'));
      await expect(circuit.call(shared, () => 'local')).resolves.toBe('local');
      expect(shared).not.toHaveBeenCalled();

      // Half-open: the first failure after a quiet spell is probed at once (an event-loop stall can time out a
      // command Redis answered), then every 3 s; a probe that fails keeps it open, one that answers closes it.
      const start = Date.now();
      await vi.advanceTimersByTimeAsync(0);
      expect(probes.map((at) => at - start)).toEqual([0]);
      expect(circuit.isOpen).toBe(true);
      await vi.advanceTimersByTimeAsync(3_000);
      expect(probes.map((at) => at - start)).toEqual([0, 3_000]);
      expect(circuit.isOpen).toBe(true);
      probeAnswers = true;
      await vi.advanceTimersByTimeAsync(3_000);
      expect(probes).toHaveLength(3);
      expect(circuit.isOpen).toBe(false);
      await expect(circuit.call(shared, () => 'local')).resolves.toBe('shared');
      expect(events).toEqual(['open', 'close']);

      // A failure soon after the last one waits the interval: a Redis that answers PING but not the increment
      // is not asked on every request.
      circuit.trip(new Error('timeout'));
      await vi.advanceTimersByTimeAsync(2_999);
      expect(probes).toHaveLength(3);
      expect(circuit.isOpen).toBe(true);
      await vi.advanceTimersByTimeAsync(1);
      expect(probes).toHaveLength(4);
      expect(circuit.isOpen).toBe(false);

      // After a quiet spell, a failure is probed at once again.
      await vi.advanceTimersByTimeAsync(QUIET_BEFORE_QUICK_PROBE_MS);
      circuit.trip(new Error('timeout'));
      expect(circuit.isOpen).toBe(true);
      await vi.advanceTimersByTimeAsync(0);
      expect(probes).toHaveLength(5);
      expect(circuit.isOpen).toBe(false);

      // A new connection's ready event probes at once.
      probeAnswers = false;
      circuit.trip(new Error('closed'));
      probeAnswers = true;
      circuit.probeNow();
      await vi.advanceTimersByTimeAsync(0);
      expect(circuit.isOpen).toBe(false);
      circuit.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});

function redisTarget() {
  const url = new URL(REDIS_URL);
  return { host: url.hostname, port: Number(url.port || 6379) };
}
