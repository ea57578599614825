import type { ChildProcess } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';
import { spawnServer } from './helpers/server-process.js';
import { recordEvent, startReceiver, waitFor } from './helpers/webhooks.js';

/** Real server processes on one PostgreSQL database: several deliver side by side, one is killed mid-delivery. */
const testDb = await createTestDatabase();
const children = new Set<ChildProcess>();
const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const close of closers) await close();
  await testDb.database.close();
  await testDb.drop();
});

async function startServer(env: Record<string, string> = {}) {
  const server = await spawnServer({
    DATABASE_URL: testDb.url,
    LOG_LEVEL: 'fatal',
    MIGRATE_ON_START: 'false',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '20',
    ...env,
  });
  children.add(server.child);
  return server;
}

async function api(base: string, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** Starting server processes dominates these tests; a loaded machine needs far more than the default 30 s. */
const PROCESS_TEST_TIMEOUT_MS = 120_000;

describe.skipIf(!testDb.url)('several server processes on one database', () => {
  it('never runs one attempt of a delivery twice, or two attempts at the same time', async () => {
    const env = { WEBHOOK_RETRY_DELAYS: '0.05,0.05', WEBHOOK_CONCURRENCY: '4', WEBHOOK_TIMEOUT_MS: '5000' };
    const [first, second] = await Promise.all([startServer(env), startServer(env)]);
    const { key, companyId } = await makeCompany(testDb.database);
    const open = new Map<string, number>();
    const attempts = new Map<string, number>();
    let overlaps = 0;
    const receiver = await startReceiver((request, response) => {
      const id = String(request.headers['webhook-id']);
      const attempt = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, attempt);
      open.set(id, (open.get(id) ?? 0) + 1);
      if (open.get(id)! > 1) overlaps++;
      // Every delivery fails once and then succeeds, so each is claimed twice.
      setTimeout(() => {
        open.set(id, open.get(id)! - 1);
        response.writeHead(attempt === 1 ? 500 : 200).end();
      }, 30);
    });
    closers.push(receiver.close);
    const endpoint = await api(first.base, key, 'POST', '/webhook_endpoints', { url: receiver.url, events: ['*'] });
    expect(endpoint.status).toBe(200);

    const count = 60;
    const events = await Promise.all(Array.from({ length: count }, () => recordEvent(testDb.database, companyId)));
    await waitFor(async () => {
      const listed = await api(second.base, key, 'GET', `/webhook_endpoints/${endpoint.body.data.uuid}/deliveries?status=succeeded&limit=1`);
      return listed.body.data.pagination.total === count;
    }, 30_000, 'every delivery to succeed');

    expect(overlaps).toBe(0);
    expect(attempts.size).toBe(count);
    for (const event of events) expect(attempts.get(event.uuid)).toBe(2);
    const listed = await api(first.base, key, 'GET', `/webhook_endpoints/${endpoint.body.data.uuid}/deliveries?limit=100`);
    expect(listed.body.data.deliveries.every((delivery: any) => delivery.attempts === 2 && delivery.status === 'succeeded')).toBe(true);
    first.child.kill('SIGTERM');
    second.child.kill('SIGTERM');
    await Promise.all([first.exited, second.exited]);
  }, PROCESS_TEST_TIMEOUT_MS);

  it('delivers after a server is killed with SIGKILL mid-delivery, once the lease has expired', async () => {
    const env = { WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_LEASE_MARGIN_MS: '1000', WEBHOOK_RETRY_DELAYS: '60' };
    const doomed = await startServer(env);
    const { key, companyId } = await makeCompany(testDb.database);
    let arrived: (() => void) | undefined;
    const firstArrival = new Promise<void>((resolve) => (arrived = resolve));
    const receiver = await startReceiver((_request, response, index) => {
      // The first attempt never gets an answer: its server dies while waiting.
      if (index === 0) arrived?.();
      else response.writeHead(200).end();
    });
    closers.push(receiver.close);
    const endpoint = await api(doomed.base, key, 'POST', '/webhook_endpoints', { url: receiver.url, events: ['*'] });
    const event = await recordEvent(testDb.database, companyId);
    await firstArrival;
    const [{ lease_expires_at: leaseEnd }] = (
      (await testDb.database.db.execute(
        sql`select lease_expires_at from webhook_deliveries where company_id = ${companyId} and event_uuid = ${event.uuid}`,
      )) as unknown as { rows: Array<{ lease_expires_at: Date | string }> }
    ).rows;
    doomed.child.kill('SIGKILL');
    const [, signal] = await doomed.exited;
    expect(signal).toBe('SIGKILL');

    const successor = await startServer(env);
    const delivered = await waitFor(async () => {
      const listed = await api(successor.base, key, 'GET', `/webhook_endpoints/${endpoint.body.data.uuid}/deliveries`);
      const [delivery] = listed.body.data.deliveries;
      return delivery.status === 'succeeded' ? delivery : undefined;
    }, 20_000, 'the delivery after restart');
    expect(delivered).toMatchObject({ attempts: 2, last_response_status: 200 });
    expect(receiver.received.map((request) => request.headers['webhook-id'])).toEqual([event.uuid, event.uuid]);
    // The second attempt waited for the crashed claim's lease (timeout + margin) to run out.
    expect(receiver.received[1].at).toBeGreaterThanOrEqual(new Date(leaseEnd).getTime() - 5);
    successor.child.kill('SIGTERM');
    await successor.exited;
  }, PROCESS_TEST_TIMEOUT_MS);

  it('finishes the attempt in flight on SIGTERM before exiting', async () => {
    const server = await startServer({ WEBHOOK_TIMEOUT_MS: '5000' });
    const { key, companyId } = await makeCompany(testDb.database);
    let arrived: (() => void) | undefined;
    const firstArrival = new Promise<void>((resolve) => (arrived = resolve));
    const receiver = await startReceiver((_request, response) => {
      arrived?.();
      setTimeout(() => response.writeHead(200).end(), 700);
    });
    closers.push(receiver.close);
    const endpoint = await api(server.base, key, 'POST', '/webhook_endpoints', { url: receiver.url, events: ['*'] });
    await recordEvent(testDb.database, companyId);
    await firstArrival;
    server.child.kill('SIGTERM');
    const [code] = await server.exited;
    expect(code).toBe(0);
    const after = await startServer({ WEBHOOK_WORKER_ENABLED: 'false' });
    const listed = await api(after.base, key, 'GET', `/webhook_endpoints/${endpoint.body.data.uuid}/deliveries`);
    expect(listed.body.data.deliveries[0]).toMatchObject({ status: 'succeeded', attempts: 1, last_response_status: 200 });
    expect(receiver.received).toHaveLength(1);
    after.child.kill('SIGTERM');
    await after.exited;
  }, PROCESS_TEST_TIMEOUT_MS);
});
