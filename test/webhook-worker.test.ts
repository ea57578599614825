import { afterAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { systemResolveHost } from '../src/modules/webhooks/address-safety.js';
import { DeliveryWorker, wakeDeliveryWorkers } from '../src/modules/webhooks/delivery-worker.js';
import * as webhooksRepository from '../src/modules/webhooks/webhooks.repository.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';
import { recordEvent, startReceiver, waitFor } from './helpers/webhooks.js';

// One worker in this file's process and database, four slots, and a poll far longer than any wait below:
// every claim here follows a wake-up, so the claims counted are the worker's own choice.
const ctx = await buildTestApp({
  env: {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_CONCURRENCY: '4',
    WEBHOOK_POLL_INTERVAL_MS: '60000',
    WEBHOOK_TIMEOUT_MS: '2000',
  },
});
const receiver = await startReceiver();
const hanging = await startReceiver(() => undefined);
afterAll(async () => {
  await receiver.close();
  await hanging.close();
});

async function succeededCount(key: string, endpointUuid: string): Promise<number> {
  const response = await call(ctx.app, 'GET', `/api/v1/webhook_endpoints/${endpointUuid}/deliveries?status=succeeded&limit=100`, { key });
  expect(response.status).toBe(200);
  return response.body.data.pagination.total as number;
}

/** A new company with one endpoint subscribed to every event at `url`, and its deliveries as their GET lists them. */
async function companyWithEndpoint(url: string) {
  const { key, companyId } = await makeCompany(ctx.database);
  const created = await call(ctx.app, 'POST', '/api/v1/webhook_endpoints', { key, body: { url, events: ['*'] } });
  expect(created.status).toBe(200);
  const endpointUuid = created.body.data.uuid as string;
  const log = async () => (await call(ctx.app, 'GET', `/api/v1/webhook_endpoints/${endpointUuid}/deliveries`, { key })).body.data.deliveries;
  return { key, companyId, endpointUuid, log };
}

describe('the delivery worker claims in batches', () => {
  it('drains a backlog beyond its slots as slots free up, and claims no more once a claim drained what was due', async () => {
    const { key, companyId, endpointUuid } = await companyWithEndpoint(receiver.url);
    const claims = vi.spyOn(webhooksRepository, 'claimDueDeliveries');
    try {
      // Twelve due deliveries for four slots: full claims of 4 leave a backlog, and each freed slot claims
      // again; waiting for the poll instead would take a minute.
      for (let index = 0; index < 12; index++) await recordEvent(ctx.database, companyId);
      wakeDeliveryWorkers();
      await waitFor(async () => (await succeededCount(key, endpointUuid)) === 12, 15_000, 'twelve deliveries');
      expect(claims.mock.calls.length).toBeGreaterThanOrEqual(3);

      // Two due deliveries: one claim takes both, and their finished attempts claim nothing more. The claim a
      // slot freed by the twelfth attempt makes (and finds nothing) may still be on its way: let it pass first.
      await new Promise((resolve) => setTimeout(resolve, 300));
      claims.mockClear();
      for (let index = 0; index < 2; index++) await recordEvent(ctx.database, companyId);
      wakeDeliveryWorkers();
      await waitFor(async () => (await succeededCount(key, endpointUuid)) === 14, 15_000, 'two more deliveries');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(claims).toHaveBeenCalledTimes(1);
      expect(await claims.mock.results[0].value).toHaveLength(2);
    } finally {
      claims.mockRestore();
    }
  });
});

describe('a stopping worker', () => {
  it('waits a bounded time for an attempt in flight, then interrupts it and records it as due again', async () => {
    const { companyId, log } = await companyWithEndpoint(hanging.url);
    // A worker of its own whose timeout is far away, so only the shutdown can end the attempt.
    const worker = new DeliveryWorker(
      ctx.database.db,
      { ...ctx.config, WEBHOOK_TIMEOUT_MS: 60_000, WEBHOOK_POLL_INTERVAL_MS: 50, WEBHOOK_RETRY_DELAYS: [30] },
      { allowPrivateNetworks: true, resolveHost: systemResolveHost },
      pino({ level: 'silent' }),
    );
    await recordEvent(ctx.database, companyId);
    worker.start();
    await waitFor(() => hanging.received.length === 1, 10_000, 'the attempt to reach the receiver');
    const started = Date.now();
    await worker.stop();
    // The stop waits STOP_WAIT_MS (5 s) for the attempt, not the 60 s timeout.
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_500);
    expect(Date.now() - started).toBeLessThan(15_000);
    const [delivery] = await log();
    expect(delivery).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_error: 'The attempt was interrupted by a shutdown.',
      last_response_status: null,
    });
    expect(Date.parse(delivery.next_attempt_at)).toBeGreaterThan(Date.now() + 20_000);
  }, 30_000);
});

describe('a retry asked for while an attempt is in flight', () => {
  it('is not lost when the attempt ends: the delivery is due again at once, whatever the attempt answered', async () => {
    const { key, companyId, endpointUuid, log } = await companyWithEndpoint(hanging.url);
    const before = hanging.received.length;
    await recordEvent(ctx.database, companyId);
    wakeDeliveryWorkers();
    await waitFor(() => hanging.received.length === before + 1, 10_000, 'the first attempt to reach the receiver');
    const [delivery] = await log();
    // The attempt hangs until WEBHOOK_TIMEOUT_MS (2 s); the retry is asked for meanwhile.
    const retried = await call(ctx.app, 'POST', `/api/v1/webhook_endpoints/${endpointUuid}/deliveries/${delivery.uuid}/retry`, { key });
    expect(retried.status).toBe(200);
    expect(retried.body.data).toMatchObject({ status: 'pending' });
    await waitFor(async () => (await log())[0].attempts === 1 && (await log())[0].last_error !== null, 10_000, 'the first attempt to be recorded');
    const [recorded] = await log();
    // Due now, not after the back-off a timed-out attempt would get.
    expect(recorded.status).toBe('pending');
    expect(Date.parse(recorded.next_attempt_at)).toBeLessThanOrEqual(Date.now() + 1_000);
    wakeDeliveryWorkers();
    await waitFor(() => hanging.received.length === before + 2, 10_000, 'the retried attempt to reach the receiver');
  }, 30_000);
});

describe('a retried delivery of a disabled endpoint', () => {
  it('ends failed again without an attempt counted, and nothing is sent', async () => {
    const { key, companyId, endpointUuid, log } = await companyWithEndpoint(receiver.url);
    await recordEvent(ctx.database, companyId);
    // One delivery made while enabled, disabled before the worker gets to it, then retried.
    await call(ctx.app, 'PATCH', `/api/v1/webhook_endpoints/${endpointUuid}`, { key, body: { enabled: false } });
    const [delivery] = await log();
    expect(delivery).toMatchObject({ status: 'failed', attempts: 0 });
    const received = receiver.received.length;
    // The API refuses the retry of a disabled endpoint's delivery; one scheduled just before the endpoint was
    // disabled is as good as this one made due in the database.
    const retried = await call(ctx.app, 'POST', `/api/v1/webhook_endpoints/${endpointUuid}/deliveries/${delivery.uuid}/retry`, { key });
    expect(retried.status).toBe(400);
    await ctx.database.db.execute(sql`update webhook_deliveries set status = 'pending', next_attempt_at = now() where uuid = ${delivery.uuid}`);
    expect((await log())[0]).toMatchObject({ status: 'pending', attempts: 0 });
    wakeDeliveryWorkers();
    await waitFor(async () => (await log())[0].status === 'failed', 10_000, 'the retried delivery to end');
    expect((await log())[0]).toMatchObject({ status: 'failed', attempts: 0, last_error: 'The endpoint was disabled.' });
    expect(receiver.received.length).toBe(received);
  });
});

describe('a worker with many attempts in flight', () => {
  it('holds one shutdown listener per attempt without Node warning of a leak', async () => {
    const { key, log } = await companyWithEndpoint(hanging.url);
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    // A worker of its own with more slots than Node's default of 10 listeners per signal.
    const worker = new DeliveryWorker(
      ctx.database.db,
      { ...ctx.config, WEBHOOK_CONCURRENCY: 16, WEBHOOK_TIMEOUT_MS: 1_500, WEBHOOK_POLL_INTERVAL_MS: 50, WEBHOOK_RETRY_DELAYS: [30] },
      { allowPrivateNetworks: true, resolveHost: systemResolveHost },
      pino({ level: 'silent' }),
    );
    try {
      for (let index = 0; index < 12; index++) {
        const created = await call(ctx.app, 'POST', '/api/v1/customers', { key, body: { first_name: 'Many', last_name: `In flight ${index}` } });
        expect(created.status).toBe(200);
      }
      const before = hanging.received.length;
      worker.start();
      await waitFor(() => hanging.received.length >= before + 12, 10_000, 'twelve attempts in flight at once');
      await waitFor(async () => (await log()).every((delivery: { last_error: string | null }) => delivery.last_error !== null), 10_000, 'the attempts to time out');
    } finally {
      await worker.stop();
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      process.off('warning', onWarning);
    }
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning').map(String)).toEqual([]);
  }, 30_000);
});
