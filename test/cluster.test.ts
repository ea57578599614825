/**
 * The scale-out deployment for real: 3 API processes behind HAProxy, PgBouncer in transaction pooling mode
 * in front of PostgreSQL, rate limits in Redis, all on loopback ports (scripts/local-cluster.ts). Skipped
 * only outside CI on a machine without haproxy and pgbouncer; in CI (CI=true) it always runs.
 */
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cluster } from '../scripts/local-cluster.js';
import type { Database } from '../src/db/client.js';
import { insertJob } from './helpers/billing-factories.js';
import { makeCompany, makeKey, type TestCompany } from './helpers/factories.js';
import { clusterRunnable, startTestCluster, type TestCluster } from './helpers/test-cluster.js';

const RATE_LIMIT = 60;

interface Answer {
  status: number;
  body: any;
  servedBy: string | null;
  headers: Headers | null;
}

/** One request over HTTP; a connection failure is status 0. */
async function send(base: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  try {
    const response = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed, servedBy: response.headers.get('x-served-by'), headers: response.headers };
  } catch {
    return { status: 0, body: null, servedBy: null, headers: null };
  }
}

function expectOk(answer: Answer, status = 200) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  return answer.body.data;
}

/** An error answer in the envelope with its request id (the body names it too once the envelope carries it). */
function expectErrorEnvelope(answer: Answer, code: string) {
  expect(answer.body).toMatchObject({ success: false, error: { code, message: expect.any(String) } });
  const requestId = answer.headers?.get('x-request-id');
  expect(requestId).toMatch(/^[\w.:-]{1,128}$/);
  if (answer.body.error.request_id !== undefined) expect(answer.body.error.request_id).toBe(requestId);
}

/** Keys of one company, used in turn so the per-key rate limit stays out of the way of a test's volume. */
/** `count` fresh keys of the company, handed out in turn: none carries requests of an earlier test against its rate. */
async function keysOf(database: Database, company: TestCompany, count: number) {
  const keys: string[] = [];
  while (keys.length < count) keys.push((await makeKey(database, company.companyId)).api_key);
  let next = 0;
  return () => keys[next++ % keys.length];
}

describe.runIf(clusterRunnable)('cluster: 3 instances, HAProxy, PgBouncer (transaction mode), Redis', () => {
  let running: TestCluster;
  let cluster: Cluster;
  let database: Database;

  beforeAll(async () => {
    running = await startTestCluster({ LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) });
    ({ cluster, database } = running);
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  }, 60_000);

  it('serves the main flows through the balancer, spread over every instance', async () => {
    const company = await makeCompany(database);
    const base = cluster.url;
    const key = company.key;
    const servedBy = new Set<string>();
    const step = async (method: string, path: string, body?: unknown) => {
      const answer = await send(base, method, path, key, body);
      if (answer.servedBy) servedBy.add(answer.servedBy);
      return answer;
    };

    expectOk(await step('PUT', '/numbering', { invoice: { prefix: 'INV-', padding: 4 }, estimate: { prefix: 'EST-', padding: 3 } }));
    const customer = expectOk(await step('POST', '/customers', { first_name: 'Dana', last_name: 'Reyes', email: 'dana@example.com' }));
    const job = expectOk(await step('POST', '/jobs', { customer_uuid: customer.uuid, title: 'Replace water heater' }));
    const template = expectOk(await step('POST', '/templates', { name: 'Tune-up', pricing_type: 'flat', base_price: 149.5 }));
    const estimate = expectOk(await step('POST', '/estimates', { customer_uuid: customer.uuid, template_uuid: template.uuid }));
    expect(estimate.estimate_number).toBe('EST-001');
    expect(estimate.total_amount).toBe(149.5);
    const invoice = expectOk(
      await step('POST', '/invoices', {
        job_uuid: job.uuid,
        customer_uuid: customer.uuid,
        due_date: '2099-12-31',
        line_items: [
          { description: 'Labour', quantity: 2.5, unit_price: 80, tax_rate: 8.25 },
          { description: 'Parts', quantity: 1, unit_price: 19.99 },
        ],
      }),
    );
    expect(invoice.invoice_number).toBe('INV-0001');
    expect(invoice.total_amount).toBe(236.49);
    const payment = expectOk(await step('POST', '/payments', { invoice_uuid: invoice.uuid, payment_type: 'cash', amount: 36.49, payment_date: '2026-11-20' }));
    expect(payment.amount).toBe(36.49);
    const reread = expectOk(await step('GET', `/invoices/${invoice.uuid}`));
    expect(reread.balance_amount).toBe(200);
    const numbering = expectOk(await step('GET', '/numbering'));
    expect(numbering.invoice.next_number_formatted).toBe('INV-0002');
    for (let i = 0; i < 3; i++) expectOk(await step('GET', `/customers/${customer.uuid}`));
    // Round robin over three healthy instances.
    expect([...servedBy].sort()).toEqual(['api1', 'api2', 'api3']);
  });

  it('gives 50 concurrent invoice creates spread over the instances 50 consecutive numbers', async () => {
    const company = await makeCompany(database);
    const nextKey = await keysOf(database, company, 4);
    const customer = expectOk(await send(cluster.url, 'POST', '/customers', nextKey(), { first_name: 'Pat', last_name: 'Lee' }));
    const jobs: string[] = [];
    for (let i = 0; i < 50; i++) jobs.push(await insertJob(database, company.companyId, customer.uuid));
    const answers = await Promise.all(
      jobs.map((jobUuid, index) =>
        send(cluster.instances[index % 3].url, 'POST', '/invoices', nextKey(), {
          job_uuid: jobUuid,
          customer_uuid: customer.uuid,
          due_date: '2099-12-31',
          line_items: [{ description: 'Service', unit_price: 100 }],
        }),
      ),
    );
    const numbers = answers.map((answer) => Number(String(expectOk(answer).invoice_number).replace(/\D/g, ''))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 50 }, (_, index) => numbers[0] + index));
    expect(numbers[0]).toBe(1);
  });

  it('writes once for one Idempotency-Key retried on different instances, in turn and at once', async () => {
    const company = await makeCompany(database);
    const body = { first_name: 'Ida', last_name: 'Empotent' };
    const headers = { 'idempotency-key': 'retry-on-another-instance' };
    const [a, b, c] = cluster.instances.map((instance) => instance.url);
    const first = await send(a, 'POST', '/customers', company.key, body, headers);
    const uuid = expectOk(first).uuid;
    const second = await send(b, 'POST', '/customers', company.key, body, headers);
    expect(expectOk(second).uuid).toBe(uuid);
    expect(second.headers?.get('idempotent-replayed')).toBe('true');
    const third = await send(c, 'POST', '/customers', company.key, body, headers);
    expect(expectOk(third).uuid).toBe(uuid);

    const together = { 'idempotency-key': 'three-at-once' };
    const racing = await Promise.all([a, b, c].map((base) => send(base, 'POST', '/customers', company.key, { ...body, last_name: 'Racing' }, together)));
    const racedUuids = new Set(racing.map((answer) => expectOk(answer).uuid));
    expect(racedUuids.size).toBe(1);

    const list = expectOk(await send(a, 'GET', '/customers?limit=100', company.key));
    expect(list.customers.map((customer: { uuid: string }) => customer.uuid).sort()).toEqual([uuid, ...racedUuids].sort());
  });

  it(`refuses a key past ${RATE_LIMIT} requests a minute counted over all instances, not per instance`, async () => {
    const company = await makeCompany(database);
    const statuses: number[] = [];
    const servedBy = new Set<string>();
    for (let wave = 0; wave < 9; wave++) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => send(cluster.url, 'GET', '/companies/me', company.key)));
      for (const answer of answers) {
        statuses.push(answer.status);
        if (answer.servedBy) servedBy.add(answer.servedBy);
      }
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(RATE_LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(90 - RATE_LIMIT);
    expect([...servedBy].sort()).toEqual(['api1', 'api2', 'api3']);
    // Another key is counted on its own.
    const other = await makeKey(database, company.companyId);
    expectOk(await send(cluster.url, 'GET', '/companies/me', other.api_key));
  });

  it('refuses a company past its monthly limit within one second of traffic of overshoot, on every instance', async () => {
    const limit = 250;
    const company = await makeCompany(database, { monthlyRequestLimit: limit });
    // Enough keys that no key reaches the per-key rate limit: a 429 would count as usage too.
    const nextKey = await keysOf(database, company, 24);
    let accepted = 0;
    let refusals = 0;
    const started = performance.now();
    let firstRefusalAt: number | null = null;
    while (firstRefusalAt === null || performance.now() - firstRefusalAt < 1_500) {
      const answers = await Promise.all(Array.from({ length: 12 }, () => send(cluster.url, 'GET', '/companies/me', nextKey())));
      for (const answer of answers) {
        if (answer.status === 200) accepted += 1;
        else {
          expect(answer.status, JSON.stringify(answer.body)).toBe(403);
          expect(answer.body.error.code).toBe('usage_limit_exceeded');
          refusals += 1;
        }
      }
      if (firstRefusalAt === null && refusals > 0) firstRefusalAt = performance.now();
      expect(accepted + refusals).toBeLessThan(3_000);
    }
    const perSecond = accepted / ((firstRefusalAt! - started) / 1000);
    // Exact within one instance, so never fewer than the limit; across instances at most one second over.
    expect(accepted).toBeGreaterThanOrEqual(limit);
    expect(accepted - limit).toBeLessThanOrEqual(Math.ceil(perSecond));
    // Once the counts have been exchanged every instance refuses.
    for (const instance of cluster.instances) {
      const answer = await send(instance.url, 'GET', '/companies/me', nextKey());
      expect(answer.status).toBe(403);
      expect(answer.headers?.get('x-usage-limit')).toBe(String(limit));
    }
  });

  it('keeps the instances in the pool through a database outage, every answer their own envelope, and serves again within 0.5 s', async () => {
    const company = await makeCompany(database);
    const nextKey = await keysOf(database, company, 24);
    const answers: Array<Answer & { sentAt: number; at: number }> = [];
    let polling = true;
    const poller = async () => {
      while (polling) {
        const sentAt = performance.now();
        const answer = await send(cluster.url, 'GET', '/customers?limit=1', nextKey());
        answers.push({ ...answer, sentAt, at: performance.now() });
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    };
    const pollers = Promise.all(Array.from({ length: 4 }, poller));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const killedAt = performance.now();
    await cluster.pgbouncer.kill('SIGKILL');
    // Longer than three failed checks a second: every instance fails /readyz.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await cluster.pgbouncer.start();
    const backAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    polling = false;
    await pollers;

    const during = answers.filter((answer) => answer.at > killedAt + 100 && answer.at < backAt);
    expect(during.length).toBeGreaterThan(50);
    for (const answer of [...during, ...answers.filter((answer) => answer.at >= backAt)]) {
      if (answer.status === 200) continue;
      // The instance's own answer (HAProxy names it), in the envelope, with its request id.
      expect(answer.status, JSON.stringify(answer.body)).toBe(503);
      expect(answer.servedBy).toMatch(/^api\d$/);
      expectErrorEnvelope(answer, 'service_unavailable');
    }
    const spread = new Set(during.slice(-12).map((answer) => answer.servedBy));
    expect(spread.size).toBe(3);
    const firstOk = answers.find((answer) => answer.at > backAt && answer.status === 200);
    expect(firstOk).toBeDefined();
    expect(firstOk!.at - backAt).toBeLessThan(500);
    expect(answers.filter((answer) => answer.sentAt > backAt + 500).map((answer) => answer.status)).not.toContain(503);
  }, 20_000);

  it('passes a URL too long for an instance to it, which answers 400 in the envelope', async () => {
    const company = await makeCompany(database);
    const answer = await send(cluster.url, 'GET', `/customers?search=${'a'.repeat(20_000)}`, company.key);
    expect(answer.status).toBe(400);
    expectErrorEnvelope(answer, 'validation_error');
  });

  it('loses no acknowledged write when an instance is SIGKILLed under load, and routes around it', async () => {
    const company = await makeCompany(database);
    const workers = 12;
    const perWorker = 35;
    const nextKey = await keysOf(database, company, workers);
    const acknowledged: string[] = [];
    const failures: Array<{ status: number; at: number }> = [];
    const servedAfterKill = new Set<string>();
    const servedBefore = new Set<string>();
    let killedAt: number | null = null;
    const victim = cluster.instances[1];

    const worker = async (workerIndex: number) => {
      const key = nextKey();
      for (let i = 0; i < perWorker; i++) {
        const sentAt = performance.now();
        const answer = await send(cluster.url, 'POST', '/customers', key, { first_name: `W${workerIndex}`, last_name: `Load ${i}` });
        if (answer.status === 200) {
          acknowledged.push(answer.body.data.uuid);
          if (killedAt === null && answer.servedBy) servedBefore.add(answer.servedBy);
          // Sent after the process was gone (a request answered as the signal left may still name it).
          if (killedAt !== null && sentAt > killedAt + 100 && answer.servedBy) servedAfterKill.add(answer.servedBy);
        } else {
          failures.push({ status: answer.status, at: performance.now() });
        }
      }
    };
    const load = Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
    await new Promise((resolve) => setTimeout(resolve, 800));
    killedAt = performance.now();
    victim.child.kill('SIGKILL');
    await load;

    expect(victim.exited || victim.child.signalCode === 'SIGKILL').toBe(true);
    expect(servedBefore.has(victim.name)).toBe(true);
    expect(servedAfterKill.has(victim.name)).toBe(false);
    // Only requests in flight on the killed instance may fail, and only around the moment of the kill.
    for (const failure of failures) {
      expect([0, 502, 503, 504]).toContain(failure.status);
      expect(failure.at - killedAt).toBeLessThan(3_000);
    }
    expect(acknowledged.length).toBeGreaterThan(workers * perWorker / 2);
    // At most one request of each worker was in flight on the killed instance.
    expect(failures.length).toBeLessThanOrEqual(workers);

    // Every create that was answered 200 is there, read through the balancer.
    const readKey = (await makeKey(database, company.companyId)).api_key;
    const stored = new Set<string>();
    for (let page = 1; ; page++) {
      const list = expectOk(await send(cluster.url, 'GET', `/customers?limit=100&page=${page}`, readKey));
      for (const customer of list.customers) stored.add(customer.uuid);
      if (list.customers.length < 100) break;
    }
    expect(acknowledged.filter((uuid) => !stored.has(uuid))).toEqual([]);

    // The balancer keeps answering on the two instances left.
    const after = await Promise.all(Array.from({ length: 12 }, () => send(cluster.url, 'GET', '/companies/me', nextKey())));
    for (const answer of after) {
      expect(answer.status).toBe(200);
      expect(answer.servedBy).not.toBe(victim.name);
    }
  }, 45_000);
  it('drains an instance that shuts down (SIGTERM) under load: it leaves the pool and no request gets an error', async () => {
    const company = await makeCompany(database);
    const workers = 8;
    // Each request takes the next of 16 keys: about 40 requests a key in the run, under the 60 a minute.
    const nextKey = await keysOf(database, company, 16);
    const victim = cluster.instances[2];
    const statuses: number[] = [];
    const servedAfterExit = new Set<string>();
    let exitedAt: number | null = null;
    let running = true;
    const worker = async (index: number) => {
      for (let i = 0; running; i++) {
        const sentAt = performance.now();
        const answer = await send(cluster.url, 'POST', '/customers', nextKey(), { first_name: `D${index}`, last_name: `Drain ${i}` });
        statuses.push(answer.status);
        if (exitedAt !== null && sentAt > exitedAt && answer.servedBy) servedAfterExit.add(answer.servedBy);
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
    };
    const load = Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
    await new Promise((resolve) => setTimeout(resolve, 700));
    const exited = once(victim.child, 'exit');
    victim.child.kill('SIGTERM');
    const [code] = await exited;
    exitedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 700));
    running = false;
    await load;

    expect(code).toBe(0);
    // The others took its share once it had gone.
    expect(servedAfterExit.size).toBeGreaterThan(0);
    expect(servedAfterExit.has(victim.name)).toBe(false);
    // No 5xx, no error from the balancer, no cut request: the instance drains (SHUTDOWN_DRAIN_MS) until the
    // balancer has taken it out, and only then closes its listener.
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThan(workers * 5);
  }, 30_000);
});
