import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';

const testDb = await createTestDatabase();
afterAll(async () => {
  await testDb.database.close();
  await testDb.drop();
});

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  server.close();
  return port;
}

async function waitReady(base: string) {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      const response = await fetch(`${base}/readyz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('server did not become ready');
}

describe.skipIf(!testDb.url)('graceful shutdown', () => {
  it('finishes in-flight requests on SIGTERM and exits cleanly', async () => {
    const company = await makeCompany(testDb.database);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, DATABASE_URL: testDb.url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    server.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = once(server, 'exit');
    await waitReady(base);

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
            server.kill('SIGTERM');
          }
          return response.status;
        },
        () => 'refused',
      ),
    );
    const statuses = await Promise.all(inFlight);
    const [code] = await exited;

    expect(code, stderr).toBe(0);
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
