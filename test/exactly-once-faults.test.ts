/**
 * Exactly once through faults: the cluster (three instances behind HAProxy, PgBouncer in transaction mode,
 * rate limits in Redis) under write load, with PgBouncer SIGKILLed and started again after 0.1 s and after
 * 2 s, several rounds, and once after 4 s (longer than the balancer's checks take to fail every instance). Writers create customers, invoices and payments, each request with its own
 * Idempotency-Key and the key as a marker in the record; every request that fails or is cut is sent again
 * with the same key until it gets a final answer. Then each promise is checked on its own: every answer in
 * the envelope with an x-request-id, no 500, every key answered and none left in progress, no acknowledged
 * write lost, no key written twice, and requests served again within 0.5 s of the pooler's return.
 *
 * It runs only with FAULT_TEST=1 (then, in CI, always; elsewhere it is skipped when haproxy or pgbouncer is
 * missing). Each run prints what it measured; FAULT_TEST_REPORT=<file> also writes every key's attempts there.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingPrograms, type Cluster } from '../scripts/local-cluster.js';
import type { Database } from '../src/db/client.js';
import { idempotencyKeys } from '../src/db/schema/index.js';
import { insertJob } from './helpers/billing-factories.js';
import { makeCompany, type TestCompany } from './helpers/factories.js';
import { clusterRunnable, startTestCluster, type TestCluster } from './helpers/test-cluster.js';

const enabled = process.env.FAULT_TEST === '1';
if (!enabled) {
  process.stdout.write('test/exactly-once-faults.test.ts skipped: set FAULT_TEST=1 to run the fault test\n');
} else if (!clusterRunnable) {
  process.stdout.write(`test/exactly-once-faults.test.ts skipped: needs PostgreSQL and ${missingPrograms().join(', ') || 'haproxy, pgbouncer'}\n`);
}
const WRITERS = 8;
/** How long PgBouncer stays dead in each round; the last one outlasts three failed health checks (3 s). */
const OUTAGES_MS = [100, 2_000, 100, 2_000, 100, 2_000, 4_000];
/** Load before the first round and between rounds. */
const CALM_MS = 1_500;
/** Once the rounds are over, how long a key may still be retried before it counts as never answered. */
const GIVE_UP_AFTER_MS = 12_000;
/** An answer slower than this means the key waits on another request with it: a writer hands it off. */
const HAND_OFF_AFTER_MS = 1_000;
/** Longer than an instance waits for a request that holds the same key (10 s). */
const REQUEST_TIMEOUT_MS = 15_000;

type Operation = 'customer' | 'invoice' | 'payment';
const PATHS: Record<Operation, string> = { customer: '/customers', invoice: '/invoices', payment: '/payments' };

interface Attempt {
  status: number;
  sentAt: number;
  receivedAt: number;
  /** Why the answer is not the envelope with an x-request-id; null when it is (or when there was no answer). */
  envelopeProblem: string | null;
  code: string | null;
  message: string | null;
}

interface KeyRecord {
  key: string;
  operation: Operation;
  attempts: Attempt[];
  /** The final answer: 200 or a 4xx that retrying cannot change. */
  final: { status: number; uuid: string | null; code: string | null } | null;
  /** Every record uuid a 200 gave for this key. */
  acknowledged: Set<string>;
}

interface Round {
  outageMs: number;
  killedAt: number;
  backAt: number;
  /** From PgBouncer serving again to the first 200 through the balancer. */
  firstOkMs: number | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function envelopeProblem(status: number, headers: Headers, text: string): string | null {
  const requestId = headers.get('x-request-id');
  if (!requestId) return 'no x-request-id header';
  if (!/^application\/json/.test(headers.get('content-type') ?? '')) return `content-type ${headers.get('content-type')}: ${text.slice(0, 80)}`;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return `not JSON: ${text.slice(0, 80)}`;
  }
  if (status === 200) return body?.success === true && body.data ? null : 'a 200 outside the envelope';
  if (body?.success !== false || typeof body.error?.code !== 'string' || typeof body.error?.message !== 'string') {
    return `an error outside the envelope: ${text.slice(0, 80)}`;
  }
  if (body.error.request_id !== undefined && body.error.request_id !== requestId) return 'error.request_id is not the x-request-id';
  return null;
}

/** Statuses after which the same request with the same key can only get the same answer. */
const isFinal = (status: number) => status === 200 || (status >= 400 && status < 500 && status !== 409 && status !== 429);

describe.runIf(enabled && clusterRunnable)('exactly once through faults: PgBouncer killed under keyed write load', () => {
  let running: TestCluster;
  let cluster: Cluster;
  let database: Database;
  let company: TestCompany;
  const records: KeyRecord[] = [];
  /** The reader's GETs (no key): when traffic is served again after each outage. */
  const reads: Attempt[] = [];
  const allAttempts = () => [...records.flatMap((record) => record.attempts), ...reads];
  const rounds: Round[] = [];
  /** marker (the key) -> uuids of the records that carry it. */
  const stored = new Map<string, string[]>();
  let inProgress: string[] = [];
  let loadMs = 0;

  beforeAll(async () => {
    running = await startTestCluster({ LOG_LEVEL: 'fatal', RATE_LIMIT_PER_MINUTE: '1000000' });
    ({ cluster, database } = running);
    company = await makeCompany(database);
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${cluster.url}/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${company.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json: any = await response.json();
      if (response.status !== 200) throw new Error(`setup ${path}: ${response.status} ${JSON.stringify(json)}`);
      return json.data;
    };
    const customer = await post('/customers', { first_name: 'Fault', last_name: 'Setup' });
    const jobs: string[] = [];
    for (let i = 0; i < 12; i++) jobs.push(await insertJob(database, company.companyId, customer.uuid));
    const payable: string[] = [];
    for (let i = 0; i < 6; i++) {
      const invoice = await post('/invoices', {
        job_uuid: jobs[i],
        customer_uuid: customer.uuid,
        due_date: '2099-12-31',
        line_items: [{ description: 'Contract', unit_price: 1_000_000 }],
      });
      payable.push(invoice.uuid);
    }

    const run = randomBytes(4).toString('hex');
    const bodyOf = (operation: Operation, marker: string, writer: number, n: number) => {
      if (operation === 'customer') return { first_name: 'Fault', last_name: `Writer ${writer}`, notes: marker };
      if (operation === 'invoice') {
        return {
          job_uuid: jobs[(writer * 5 + n) % jobs.length],
          customer_uuid: customer.uuid,
          due_date: '2099-12-31',
          line_items: [{ description: 'Visit', unit_price: 10 }],
          internal_notes: marker,
        };
      }
      return { invoice_uuid: payable[(writer + n) % payable.length], payment_type: 'cash', amount: 1, payment_date: '2026-11-20', transaction_id: marker };
    };

    let rounding = true;
    let roundsEndedAt = Infinity;
    /** One request through the balancer; a connection cut or an answer later than REQUEST_TIMEOUT_MS is status 0. */
    const exchange = async (path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) => {
      const sentAt = performance.now();
      try {
        const response = await fetch(`${cluster.url}/api/v1${path}`, {
          ...init,
          headers: { authorization: `Bearer ${company.key}`, ...init.headers },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        const text = await response.text();
        let error: { code?: string; message?: string } | undefined;
        try {
          error = JSON.parse(text)?.error;
        } catch {
          error = undefined;
        }
        const problem = envelopeProblem(response.status, response.headers, text);
        return { status: response.status, sentAt, receivedAt: performance.now(), envelopeProblem: problem, code: error?.code ?? null, message: error?.message ?? null, text };
      } catch {
        return { status: 0, sentAt, receivedAt: performance.now(), envelopeProblem: null, code: null, message: null, text: '' };
      }
    };
    const send = (record: KeyRecord, body: unknown) =>
      exchange(PATHS[record.operation], {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': record.key },
        body: JSON.stringify(body),
      });
    const handedOff: Array<Promise<unknown>> = [];
    const absorb = (record: KeyRecord, { text, ...attempt }: Attempt & { text: string }) => {
      record.attempts.push(attempt);
      const uuid: string | null = attempt.status === 200 ? (JSON.parse(text)?.data?.uuid ?? null) : null;
      if (uuid) record.acknowledged.add(uuid);
      if (isFinal(attempt.status)) record.final = { status: attempt.status, uuid, code: attempt.code };
    };
    /**
     * Sends the key's request again until it has a final answer or the give-up time has come. A writer hands a
     * key that waits on another request with the same key (an answer slower than HAND_OFF_AFTER_MS, or a 409)
     * to a retry of its own and goes on with new keys, so the load does not stop while such a key waits.
     */
    const settle = async (record: KeyRecord, body: unknown, handOff: boolean): Promise<void> => {
      while (!record.final && performance.now() < roundsEndedAt + GIVE_UP_AFTER_MS) {
        const answered = send(record, body).then((attempt) => absorb(record, attempt));
        if (handOff) {
          const quick = await Promise.race([answered.then(() => true), sleep(HAND_OFF_AFTER_MS).then(() => false)]);
          if (!quick || record.attempts.at(-1)?.status === 409) {
            handedOff.push(answered.then(() => settle(record, body, false)));
            return;
          }
        } else {
          await answered;
        }
        if (!record.final) await sleep(record.attempts.at(-1)?.status === 409 ? 500 : 50);
      }
    };
    const writer = async (index: number) => {
      for (let n = 0; rounding; n++) {
        const operation = (['customer', 'invoice', 'payment'] as const)[n % 3];
        const record: KeyRecord = { key: `fault-${run}-w${index}-${n}`, operation, attempts: [], final: null, acknowledged: new Set() };
        records.push(record);
        const body = bodyOf(operation, record.key, index, n);
        await settle(record, body, true);
      }
    };

    // A reader beside the writers, every 20 ms: when the first request after each outage is served. (A writer
    // may be busy retrying one key for seconds.) Its answers are checked for the envelope like the writers'.
    const reader = async () => {
      while (rounding) {
        const { text: _text, ...attempt } = await exchange('/customers?limit=1');
        reads.push(attempt);
        await sleep(20);
      }
    };

    const started = performance.now();
    const writers = Promise.all([reader(), ...Array.from({ length: WRITERS }, (_, index) => writer(index))]);
    for (const outageMs of OUTAGES_MS) {
      await sleep(CALM_MS);
      const killedAt = performance.now();
      await cluster.pgbouncer.kill('SIGKILL');
      await sleep(outageMs);
      await cluster.pgbouncer.start();
      rounds.push({ outageMs, killedAt, backAt: performance.now(), firstOkMs: null });
    }
    await sleep(CALM_MS);
    rounding = false;
    roundsEndedAt = performance.now();
    await writers;
    // A handed-off retry may hand on nothing more, but may still be waiting when the writers are done.
    while (handedOff.length > 0) await Promise.all(handedOff.splice(0));
    loadMs = performance.now() - started;

    for (const round of rounds) {
      const firstOk = reads
        .filter((attempt) => attempt.status === 200 && attempt.sentAt > round.killedAt && attempt.receivedAt >= round.backAt)
        .reduce((earliest, attempt) => Math.min(earliest, attempt.receivedAt), Infinity);
      round.firstOkMs = Number.isFinite(firstOk) ? firstOk - round.backAt : null;
    }

    const markers = await database.pool!.query<{ marker: string; uuid: string }>(
      `select notes as marker, uuid from customers where company_id = $1 and notes like $2
       union all select internal_notes, uuid from invoices where company_id = $1 and internal_notes like $2
       union all select transaction_id, uuid from payments where company_id = $1 and transaction_id like $2`,
      [company.companyId, `fault-${run}-%`],
    );
    for (const row of markers.rows) stored.set(row.marker, [...(stored.get(row.marker) ?? []), row.uuid]);
    const open = await database.db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.companyId, company.companyId), eq(idempotencyKeys.state, 'in_progress')));
    inProgress = open.map((row) => row.key);
    report();
    if (process.env.FAULT_TEST_REPORT) {
      // Every key with its attempts (times in ms from the start) and every round, for a closer look.
      const at = (ms: number) => Math.round(ms - started);
      const keys = records.map((record) => ({
        ...record,
        acknowledged: [...record.acknowledged],
        stored: stored.get(record.key) ?? [],
        inProgress: inProgress.includes(record.key),
        attempts: record.attempts.map((attempt) => ({ ...attempt, sentAt: at(attempt.sentAt), receivedAt: at(attempt.receivedAt) })),
      }));
      const timeline = rounds.map((round) => ({ ...round, killedAt: at(round.killedAt), backAt: at(round.backAt) }));
      const readTimes = reads.map((attempt) => ({ ...attempt, sentAt: at(attempt.sentAt), receivedAt: at(attempt.receivedAt) }));
      writeFileSync(process.env.FAULT_TEST_REPORT, JSON.stringify({ rounds: timeline, keys, reads: readTimes }, null, 1));
    }
  }, 240_000);

  afterAll(async () => {
    await running?.stop();
  }, 60_000);

  function report() {
    const attempts = allAttempts();
    const byStatus = new Map<number, number>();
    for (const attempt of attempts) byStatus.set(attempt.status, (byStatus.get(attempt.status) ?? 0) + 1);
    const lines = [
      `fault test: ${records.length} keys, ${attempts.length} requests (${reads.length} of them reads) in ${(loadMs / 1000).toFixed(1)} s (${WRITERS} writers)`,
      `  answers: ${[...byStatus].sort(([a], [b]) => a - b).map(([status, count]) => `${status === 0 ? 'cut' : status} x${count}`).join(', ')}`,
      `  rounds (outage -> first 200 after PgBouncer is back): ${rounds.map((round) => `${round.outageMs} ms -> ${round.firstOkMs === null ? 'none' : `${Math.round(round.firstOkMs)} ms`}`).join('; ')}`,
      `  acknowledged keys: ${records.filter((record) => record.acknowledged.size > 0).length}; duplicates: ${duplicates().length}; lost: ${lost().length}; without a final answer: ${unanswered().length}; in progress: ${inProgress.length}; not in the envelope: ${outsideEnvelope().length}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }

  const duplicates = () =>
    records.filter((record) => (stored.get(record.key)?.length ?? 0) > 1 || record.acknowledged.size > 1).map((record) => ({
      key: record.key,
      operation: record.operation,
      stored: stored.get(record.key) ?? [],
      acknowledged: [...record.acknowledged],
      statuses: record.attempts.map((attempt) => attempt.status),
    }));
  const lost = () =>
    records.flatMap((record) => [...record.acknowledged].filter((uuid) => !(stored.get(record.key) ?? []).includes(uuid)).map((uuid) => ({ key: record.key, uuid })));
  const unanswered = () =>
    records.filter((record) => !record.final).map((record) => ({ key: record.key, statuses: record.attempts.map((attempt) => attempt.status) }));
  const outsideEnvelope = () =>
    [...records, { key: '(reads)', attempts: reads }].flatMap((record) =>
      record.attempts.filter((attempt) => attempt.envelopeProblem !== null).map((attempt) => ({ key: record.key, status: attempt.status, problem: attempt.envelopeProblem })),
    );

  it('ran the rounds under load, every kind of write acknowledged', () => {
    expect(rounds.map((round) => round.outageMs)).toEqual(OUTAGES_MS);
    for (const operation of ['customer', 'invoice', 'payment'] as const) {
      expect(records.filter((record) => record.operation === operation && record.acknowledged.size > 0).length).toBeGreaterThan(20);
    }
  });

  it('answers every request in the JSON envelope with an x-request-id: none of HAProxy\'s HTML', () => {
    expect(outsideEnvelope()).toEqual([]);
  });

  it('never answers 500, and answers no key with a final refusal', () => {
    const attempts = allAttempts();
    expect(attempts.filter((attempt) => attempt.status >= 500 && attempt.status !== 502 && attempt.status !== 503 && attempt.status !== 504)).toEqual([]);
    expect(records.filter((record) => record.final && record.final.status !== 200).map((record) => ({ key: record.key, final: record.final }))).toEqual([]);
  });

  it('gives every key a final answer when it is retried', () => {
    expect(unanswered()).toEqual([]);
  });

  it('leaves no key in progress', () => {
    expect(inProgress).toEqual([]);
  });

  it('loses no acknowledged write', () => {
    expect(lost()).toEqual([]);
  });

  it('writes each key at most once: no duplicates', () => {
    expect(duplicates()).toEqual([]);
  });

  it('serves requests again within 1 s of PgBouncer\'s return, every round', () => {
    for (const round of rounds) {
      expect(round.firstOkMs, `after a ${round.outageMs} ms outage`).not.toBeNull();
      // 0.1-0.5 s seen on two loaded cores (the cluster, the writers and other test files share them).
      expect(round.firstOkMs!, `after a ${round.outageMs} ms outage`).toBeLessThan(1_000);
    }
  });
});
