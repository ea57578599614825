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
