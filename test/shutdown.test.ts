import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';
import { spawnServer } from './helpers/server-process.js';

const testDb = await createTestDatabase();
afterAll(async () => {
  await testDb.database.close();
  await testDb.drop();
});

describe.skipIf(!testDb.url)('graceful shutdown', () => {
  it('finishes in-flight requests on SIGTERM and exits cleanly', async () => {
    const company = await makeCompany(testDb.database);
    const server = await spawnServer({ DATABASE_URL: testDb.url, LOG_LEVEL: 'warn' });
    const { base, exited } = server;

    const headers = { authorization: `Bearer ${company.key}`, 'content-type': 'application/json' };
    let signalled = false;
    const inFlight = Array.from({ length: 60 }, (_, index) =>
      fetch(`${base}/api/v1/customers`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ first_name: 'Shut', last_name: `Down${index}` }),
      }).then(
        (response) => {
          // Signal as soon as the first answer arrives: the rest of the batch is then in flight.
          if (!signalled) {
            signalled = true;
            server.child.kill('SIGTERM');
          }
          return response.status;
        },
        () => 'refused',
      ),
    );
    const statuses = await Promise.all(inFlight);
    const [code] = await exited;

    expect(code, server.stderr()).toBe(0);
    // Every request the server accepted completed; none failed half-way with a 5xx.
    expect(statuses.filter((status) => typeof status === 'number' && status >= 500 && status !== 503)).toEqual([]);
    const completed = statuses.filter((status) => status === 200).length;
    expect(completed).toBeGreaterThan(0);
    // Each 200 is a stored customer; nothing else was written.
    const { customers } = await import('../src/db/schema/index.js');
    const { eq } = await import('drizzle-orm');
    const rows = await testDb.database.db.select().from(customers).where(eq(customers.companyId, company.companyId));
    expect(rows.length).toBe(completed);
  }, 60_000);
});

describe.skipIf(!testDb.url)('shutdown order', () => {
  it('writes the usage counted just before SIGTERM to the database before the pool closes', async () => {
    const company = await makeCompany(testDb.database);
    // The longest flush interval: every count below is still buffered when the signal arrives.
    const server = await spawnServer({ DATABASE_URL: testDb.url, LOG_LEVEL: 'warn', USAGE_FLUSH_INTERVAL_MS: '1000' });
    const headers = { authorization: `Bearer ${company.key}` };
    const statuses = await Promise.all(
      Array.from({ length: 25 }, () => fetch(`${server.base}/api/v1/companies/me`, { headers }).then((r) => r.status)),
    );
    expect(statuses.every((status) => status === 200)).toBe(true);
    server.child.kill('SIGTERM');
    const [code] = await server.exited;
    expect(code, server.stderr()).toBe(0);
    expect(server.stderr()).not.toMatch(/Cannot use a pool after calling end|final usage flush failed/);
    const { usageCounters } = await import('../src/db/schema/index.js');
    const { eq, sum } = await import('drizzle-orm');
    const [row] = await testDb.database.db
      .select({ total: sum(usageCounters.requestCount) })
      .from(usageCounters)
      .where(eq(usageCounters.companyId, company.companyId));
    expect(Number(row?.total)).toBe(25);
  }, 60_000);

  it('stops background work registered as a plugin before the database closes, and closes the database last', async () => {
    const { buildApp } = await import('../src/app.js');
    const { loadConfig } = await import('../src/config.js');
    const { createDatabase } = await import('../src/db/client.js');
    const { sql } = await import('drizzle-orm');
    const fp = (await import('fastify-plugin')).default;
    const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: testDb.url, RATE_LIMIT_PER_MINUTE: '0' });
    const database = await createDatabase(config);
    const app = await buildApp({ config, database, ownsDatabase: true });
    const steps: string[] = [];
    // A background job as other modules add one: a plugin with an onClose hook making a last write.
    await app.register(
      fp(async (instance) => {
        instance.addHook('onClose', async () => {
          await new Promise((resolve) => setTimeout(resolve, 50));
          const result = (await database.db.execute(sql`select 1 as one`)) as unknown as { rows: Array<{ one: number }> };
          const [row] = result.rows;
          steps.push(`job wrote ${row.one}`);
        });
      }),
    );
    const close = database.close.bind(database);
    database.close = async () => {
      steps.push('database closed');
      await close();
    };
    await app.ready();
    const company = await makeCompany(testDb.database);
    expect((await app.inject({ method: 'GET', url: '/api/v1/companies/me', headers: { authorization: `Bearer ${company.key}` } })).statusCode).toBe(200);
    await app.close();
    expect(steps).toEqual(['job wrote 1', 'database closed']);
    await expect(database.db.execute(sql`select 1`)).rejects.toThrow();
  });
});
