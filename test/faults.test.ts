import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDatabase, type Database } from '../src/db/client.js';
import { call, createTestDatabase } from './helpers/app.js';
import { makeBillingSetup, makeInvoiceOf, paymentBody } from './helpers/billing-factories.js';
import { makeCompany, validCustomer } from './helpers/factories.js';
import { TcpProxy } from './helpers/tcp-proxy.js';

/**
 * Fault tests against real PostgreSQL. The server is shared by every test file, so it is never stopped:
 * an outage is simulated by a TCP proxy between one app and the server (see helpers/tcp-proxy.ts).
 */
const testDb = await createTestDatabase();
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await testDb.database.close();
  await testDb.drop();
});

interface FaultApp {
  app: FastifyInstance;
  database: Database;
  proxy: TcpProxy;
}

/** An app whose database connections all go through a fresh proxy. */
async function buildProxiedApp(env: Record<string, string> = {}): Promise<FaultApp> {
  const real = new URL(testDb.url as string);
  const proxy = await TcpProxy.start({ host: real.hostname, port: Number(real.port || 5432) });
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.FAULTS_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_PER_MINUTE: '0',
    DATA_DIR: 'memory://',
    DATABASE_URL: proxy.urlFor(testDb.url as string),
    DATABASE_POOL_SIZE: '5',
    ...env,
  });
  const database = await createDatabase(config);
  const app = await buildApp({ config, database });
  await app.ready();
  cleanups.push(async () => {
    await app.close();
    await database.close();
    await proxy.close();
  });
  return { app, database, proxy };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('condition not reached in time');
}

function expectUnavailable(response: { status: number; body: any }) {
  expect(response.status, JSON.stringify(response.body)).toBe(503);
  expect(response.body).toEqual({
    success: false,
    error: { code: 'service_unavailable', message: expect.any(String), request_id: expect.any(String) },
  });
}

/**
 * Once nothing runs, every pool client is back in the pool: a client lost during the outage and never
 * released would shrink the pool for good (and make pool.end() hang).
 */
async function expectNoLeakedClients(database: Database) {
  const pool = database.pool as NonNullable<Database['pool']>;
  await waitFor(async () => pool.totalCount === pool.idleCount, 5_000).catch(() => undefined);
  expect({ checkedOut: pool.totalCount - pool.idleCount, waiting: pool.waitingCount }).toEqual({ checkedOut: 0, waiting: 0 });
}

/** Requests of every kind a client makes, through the app, while `running` holds. */
function startLoad(app: FastifyInstance, key: string, invoiceUuid: string, workers: number) {
  const statuses: number[] = [];
  const codes = new Set<string>();
  let running = true;
  const loop = async (worker: number) => {
    for (let n = 0; running; n++) {
      const kind = (worker + n) % 3;
      const response =
        kind === 0
          ? await call(app, 'POST', '/api/v1/customers', { key, body: validCustomer({ last_name: `Load${worker}-${n}` }) })
          : kind === 1
            ? await call(app, 'GET', '/api/v1/customers?search=load&limit=5', { key })
            : // A transaction with a row lock: the connection is checked out of the pool when it is cut.
              await call(app, 'POST', '/api/v1/payments', { key, body: paymentBody(invoiceUuid, 0.01) });
      statuses.push(response.status);
      if (response.status !== 200) codes.add(response.body?.error?.code);
    }
  };
  const done = Promise.all(Array.from({ length: workers }, (_, worker) => loop(worker)));
  return {
    statuses,
    codes,
    async stop() {
      running = false;
      await done;
    },
  };
}

describe.skipIf(!testDb.url)('database outage (connections cut, new ones refused)', () => {
  it('answers 503 fast under load, /readyz goes false, and recovers by itself', async () => {
    const { app, proxy, database } = await buildProxiedApp();
    const setup = await makeBillingSetup(app, testDb.database);
    const cached = setup.company;
    const invoice = await makeInvoiceOf(app, setup, 100_000);
    const fresh = await makeCompany(testDb.database);
    // The first key is used (and cached) before the outage; the second is seen only during it.
    expect((await call(app, 'GET', '/api/v1/companies/me', { key: cached.key })).status).toBe(200);
    expect((await call(app, 'GET', '/readyz')).status).toBe(200);

    const load = startLoad(app, cached.key, invoice.uuid, 6);
    await waitFor(async () => load.statuses.filter((status) => status === 200).length >= 20, 15_000);
    proxy.down();
    // In-flight requests on cut connections fail; let the load run on into the outage.
    await waitFor(async () => load.statuses.filter((status) => status === 503).length >= 20, 15_000);

    const during = [
      await timed(() => call(app, 'GET', '/api/v1/customers', { key: cached.key })),
      await timed(() => call(app, 'POST', '/api/v1/customers', { key: cached.key, body: validCustomer() })),
      await timed(() => call(app, 'GET', '/api/v1/companies/me', { key: fresh.key })),
      await timed(() => call(app, 'GET', '/api/v1/customers', { key: 'fsc_live_' + 'A'.repeat(43) })),
    ];
    for (const { value, ms } of during) {
      expectUnavailable(value);
      expect(ms).toBeLessThan(6_000);
    }
    const ready = await timed(() => call(app, 'GET', '/readyz'));
    expectUnavailable(ready.value);
    expect(ready.ms).toBeLessThan(6_000);
    // Liveness is not readiness: the process is still up.
    expect((await call(app, 'GET', '/healthz')).status).toBe(200);

    proxy.up();
    // The same app instance, no restart: the pool makes new connections once the database is back.
    await waitFor(async () => (await call(app, 'GET', '/readyz')).status === 200, 15_000);
    await waitFor(async () => (await call(app, 'GET', '/api/v1/customers', { key: cached.key })).status === 200, 15_000);
    await load.stop();

    // Under load, across the outage, every answer was a success or a clean 503: never a 500, never a hang.
    expect(new Set(load.statuses)).toEqual(new Set([200, 503]));
    expect([...load.codes]).toEqual(['service_unavailable']);

    const created = await call(app, 'POST', '/api/v1/customers', { key: fresh.key, body: validCustomer() });
    expect(created.status).toBe(200);
    // Payments cut mid-transaction were rolled back: the invoice's paid amount is exactly its payments' sum.
    const sums = await testDb.database.db.execute(sql`
      select i.paid_amount::text as paid, coalesce(sum(p.amount), 0)::text as payments, count(p.*)::int as n
      from invoices i left join payments p on p.company_id = i.company_id and p.invoice_uuid = i.uuid
        and p.status = 'Completed' and p.deleted_at is null
      where i.uuid = ${invoice.uuid} group by i.paid_amount`);
    const [row] = (sums as unknown as { rows: Array<{ paid: string; payments: string; n: number }> }).rows;
    expect(row.paid).toBe(row.payments);
    expect(row.n).toBeGreaterThan(0);
    await expectNoLeakedClients(database);
    expect((await call(app, 'GET', `/api/v1/customers/${created.body.data.uuid}`, { key: fresh.key })).status).toBe(200);
  }, 60_000);

  it('survives several outages in a row and an outage while idle', async () => {
    const { app, proxy, database } = await buildProxiedApp();
    const company = await makeCompany(testDb.database);
    for (let round = 0; round < 3; round++) {
      expect((await call(app, 'GET', '/api/v1/customers', { key: company.key })).status).toBe(200);
      // Idle pool connections are cut while nothing runs: the pool must drop them, not hand them out.
      proxy.down();
      await new Promise((resolve) => setTimeout(resolve, 50));
      // A passing condition: the 503 says when to retry.
      const refused = await call(app, 'GET', '/api/v1/customers', { key: company.key });
      expectUnavailable(refused);
      expect(refused.headers['retry-after']).toBe('1');
      const notReady = await call(app, 'GET', '/readyz');
      expectUnavailable(notReady);
      expect(notReady.headers['retry-after']).toBe('1');
      proxy.up();
      await waitFor(async () => (await call(app, 'GET', '/readyz')).status === 200, 15_000);
      const response = await call(app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer() });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
    }
    await expectNoLeakedClients(database);
  }, 60_000);
});

describe.skipIf(!testDb.url)('connection cut at the start of a transaction', () => {
  it('does not leak the pool client when BEGIN fails, so the pool never runs dry', async () => {
    const { app, proxy, database } = await buildProxiedApp({ DATABASE_POOL_SIZE: '2' });
    const setup = await makeBillingSetup(app, testDb.database);
    const invoice = await makeInvoiceOf(app, setup, 1_000);
    // Every BEGIN kills its connection: each Pending payment (a transaction: it settles nothing, so it is
    // not the one-statement kind) fails right at its start.
    proxy.cutWhen = (chunk) => chunk.includes('begin\0');
    for (let attempt = 0; attempt < 4; attempt++) {
      const { value, ms } = await timed(() =>
        call(app, 'POST', '/api/v1/payments', { key: setup.company.key, body: paymentBody(invoice.uuid, 1, { status: 'Pending' }) }),
      );
      expectUnavailable(value);
      expect(ms).toBeLessThan(6_000);
    }
    proxy.cutWhen = undefined;
    // More failed BEGINs than pool slots, yet the pool still serves: nothing was leaked.
    const paid = await call(app, 'POST', '/api/v1/payments', { key: setup.company.key, body: paymentBody(invoice.uuid, 1) });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    await expectNoLeakedClients(database);
  }, 30_000);

  it('closes a client given back inside a transaction instead of pooling it, so the transaction ends', async () => {
    const database = await createDatabase(loadConfig({ NODE_ENV: 'test', DATA_DIR: 'memory://', DATABASE_URL: testDb.url as string, DATABASE_POOL_SIZE: '1' }));
    cleanups.push(() => database.close());
    const pool = database.pool as NonNullable<Database['pool']>;
    const leaked = await pool.connect();
    await leaked.query('begin');
    const { rows } = await leaked.query<{ xid: string }>('select pg_current_xact_id()::text as xid');
    leaked.release();
    // The one slot's next client is a fresh connection, outside any transaction.
    const next = await pool.connect();
    try {
      // The leaked transaction ended with its connection (a pooled one would still be in progress).
      await waitFor(async () => {
        const { rows: found } = await next.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where backend_xid::text = $1', [rows[0].xid]);
        return found[0].n === 0;
      }, 5_000);
      expect((next as unknown as { getTransactionStatus(): string }).getTransactionStatus()).toBe('I');
    } finally {
      next.release();
    }
  });
});

describe.skipIf(!testDb.url)('network partition (connections go silent)', () => {
  it('answers 503 within the timeouts instead of hanging, then recovers', async () => {
    const { app, proxy, database } = await buildProxiedApp({ STATEMENT_TIMEOUT_MS: '1000' });
    const company = await makeCompany(testDb.database);
    // Warm the pool so requests during the partition meet established, now silent, connections.
    await Promise.all(Array.from({ length: 5 }, () => call(app, 'GET', '/api/v1/customers', { key: company.key })));
    proxy.blackhole();

    const during = await Promise.all([
      timed(() => call(app, 'GET', '/api/v1/customers', { key: company.key })),
      timed(() => call(app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer() })),
      timed(() => call(app, 'GET', '/readyz')),
    ]);
    for (const { value, ms } of during) {
      expectUnavailable(value);
      // connectionTimeoutMillis (5 s) or the client-side query timeout, with room for a busy machine.
      expect(ms).toBeLessThan(12_000);
    }

    proxy.up();
    await waitFor(async () => (await call(app, 'GET', '/readyz')).status === 200, 20_000);
    await waitFor(async () => (await call(app, 'GET', '/api/v1/customers', { key: company.key })).status === 200, 20_000);
    const created = await call(app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer() });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    await expectNoLeakedClients(database);
  }, 60_000);
});

/**
 * An app straight on the test database (no proxy) with `env` over the test settings, the test-only routes
 * `routes` adds, and /__setting/:name, which answers a setting of its connections; closed after the file.
 */
async function buildDirectApp(env: Record<string, string>, routes: (app: FastifyInstance) => void) {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '0',
    DATA_DIR: 'memory://',
    DATABASE_URL: testDb.url as string,
    DATABASE_POOL_SIZE: '2',
    ...env,
  });
  const database = await createDatabase(config);
  const app = await buildApp({ config, database });
  routes(app);
  app.get('/__setting/:name', async (request) => {
    const { name } = request.params as { name: string };
    const result = await app.deps.database.db.execute(sql`select current_setting(${name}) as value`);
    return { value: (result as unknown as { rows: Array<{ value: string }> }).rows[0].value };
  });
  await app.ready();
  cleanups.push(async () => {
    await app.close();
    await database.close();
  });
  return { app, database };
}

describe.skipIf(!testDb.url)('statement timeout', () => {
  it('cuts off a slow query with 503, inside and outside a transaction, and the pool stays usable', async () => {
    // Long enough that ordinary statements on a loaded CI machine finish; far below the 2 s sleeps.
    const { app } = await buildDirectApp({ STATEMENT_TIMEOUT_MS: '400' }, (app) => {
      app.get('/__sleep', async () => {
        await app.deps.database.db.execute(sql`select pg_sleep(2)`);
        return { slept: true };
      });
      app.get('/__sleep-in-transaction', async () => {
        await app.deps.database.db.transaction(async (tx) => {
          await tx.execute(sql`select 1`);
          await tx.execute(sql`select pg_sleep(2)`);
        });
        return { slept: true };
      });
    });

    expect((await app.inject({ method: 'GET', url: '/__setting/statement_timeout' })).json()).toEqual({ value: '400ms' });

    for (const url of ['/__sleep', '/__sleep-in-transaction', '/__sleep']) {
      const { value, ms } = await timed(() => app.inject({ method: 'GET', url }));
      expect(value.statusCode, value.body).toBe(503);
      expect(value.json()).toEqual({
        success: false,
        error: { code: 'service_unavailable', message: expect.any(String), request_id: expect.any(String) },
      });
      expect(ms).toBeLessThan(1_500);
    }
    // The connections that ran the cancelled statements are healthy: ordinary work goes on.
    const company = await makeCompany(testDb.database);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const created = await call(app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer() });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
  }, 30_000);
});

describe.skipIf(!testDb.url)('a transaction left idle', () => {
  it('is ended by the server after IDLE_IN_TRANSACTION_TIMEOUT_MS, releasing the events feed; its request answers 503', async () => {
    const { app, database } = await buildDirectApp({ DATABASE_POOL_SIZE: '4', IDLE_IN_TRANSACTION_TIMEOUT_MS: '300' }, (app) => {
      // An instance that stalls mid-transaction: it takes a transaction id, then waits 2.5 s between statements.
      app.get('/__stall-in-transaction', async () => {
        await app.deps.database.db.transaction(async (tx) => {
          await tx.execute(sql`select pg_current_xact_id()`);
          await new Promise((resolve) => setTimeout(resolve, 2_500));
          await tx.execute(sql`select 1`);
        });
        return { stalled: true };
      });
    });
    expect((await app.inject({ method: 'GET', url: '/__setting/idle_in_transaction_session_timeout' })).json()).toEqual({ value: '300ms' });

    const company = await makeCompany(testDb.database);
    let stallEnded = false;
    const stalled = app.inject({ method: 'GET', url: '/__stall-in-transaction' }).then((response) => {
      stallEnded = true;
      return response;
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const created = await call(app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer() });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    // The stalled transaction is older than the create, so the feed holds the create's event back until the
    // server ends the stall at 300 ms, long before the stall itself would have ended.
    await waitFor(async () => {
      const feed = await call(app, 'GET', '/api/v1/events?limit=100', { key: company.key });
      return feed.body.data.events.some((event: { object_uuid: string }) => event.object_uuid === created.body.data.uuid);
    }, 2_000);
    expect(stallEnded).toBe(false);

    // The stalled request finds its transaction ended: 503, nothing written, and the pool goes on.
    expectUnavailable(await stalled.then((response) => ({ status: response.statusCode, body: response.json() })));
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    await expectNoLeakedClients(database);
  }, 30_000);
});
