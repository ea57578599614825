/**
 * `npm run bench`: seeds the bench database (unless the same size is there already), builds and starts the
 * real server, drives every scenario with autocannon, replays the SQL of W1-W4 through pg directly, and
 * writes the table to bench/results.md. See bench/README.md.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type AutocannonRequest } from 'autocannon';
import pg from 'pg';
import { missingPrograms, startCluster, type Cluster } from '../scripts/local-cluster.js';
import { SERVER_NODE_FLAGS } from '../scripts/server-node-flags.js';
import { buildScenarios, type BenchContext, type Scenario, type SqlBaseline } from './scenarios.js';
import { benchUrls, describeSize, ensureEvents, ensureSchedule, ensureSeed, sizeFromEnv, type ScheduleSeed, type SeedInfo } from './seed.js';
import { measureDeliveries } from './webhook-deliveries.js';
import { measureNoisyNeighbour, type NoisyNeighbourResult } from './noisy-neighbour.js';
import { runWrk, WRK_PAIRS, wrkInstalled, type WrkResult } from './wrk.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS = path.join(ROOT, 'bench', 'results.md');

const env = process.env;
const DURATION = Number(env.BENCH_DURATION || 10);
const WARMUP = Number(env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS || 32);
const DELIVERIES = Number(env.BENCH_DELIVERIES || 10_000);
const EVENTS = Number(env.BENCH_EVENTS || 100_000);
const ONLY = (env.BENCH_ONLY || '')
  .split(',')
  .map((id) => id.trim().toUpperCase())
  .filter(Boolean);

interface Row {
  id: string;
  title: string;
  skipped?: string;
  rps?: number;
  p50?: number;
  p99?: number;
  errors?: number;
  statuses?: string;
  maxRssMiB?: number;
  /**
   * CPU time per request of the measured run, in ms: the server processes' and their PostgreSQL backends'.
   * Unlike req/s it hardly moves when other programs share the cores.
   */
  cpuMs?: { node: number; postgres: number };
  /** 2xx responses of the measured run (not the warm-up). */
  ok?: number;
  /** 2xx responses including the warm-up: what the scenario wrote. */
  okAll?: number;
  sql?: { rps: number; p50: number; p99: number; errors: number };
  /** What the scenario's setup reports afterwards (W3H: deliveries written, received, drained). */
  note?: string;
}

/** Pairs measured in the same run, and the mark of the first over the second, if it has one. */
const RATIOS: Array<{ id: string; of: string; mark?: number; retired?: string }> = [
  { id: 'W3Q', of: 'W3N', mark: 0.85 },
  // Retired (issue 28): on two shared cores a delivering worker cannot be free; still measured and printed.
  { id: 'W3H', of: 'W3', mark: 0.85, retired: 'retired mark, informational: the deliveries share the two cores' },
  { id: 'W2', of: 'T2', mark: 0.9 },
  { id: 'E1', of: 'W1', mark: 1.0 },
  { id: 'E2', of: 'W1', mark: 1.0 },
  { id: 'W1', of: 'T1', mark: 5.0 },
  // Not marks: what the event §9.1 requires costs the reference server itself, and ours against the create without it.
  { id: 'W5', of: 'T5' },
  { id: 'T5E', of: 'T5' },
  // Issue 28: a create with its event against the reference server's create with its event.
  { id: 'W5', of: 'T5E', mark: 0.8 },
  // Issue 33: a technician's week, a booking and availability against the same run's get and create.
  { id: 'V1', of: 'W2', mark: 0.5 },
  { id: 'V2', of: 'W3', mark: 0.8 },
  { id: 'A1', of: 'W2', mark: 0.2 },
];

/** The most memory the API's server may take in any scenario (issues 28 and 33), in MiB. */
const MAX_RSS_MIB = 200;

const log = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `node dist/server.js` after a clean build; `node --import tsx src/server.ts` when the build fails. */
let built: { args: string[]; how: string } | undefined;
function serverCommand(): { args: string[]; how: string } {
  built ??= buildOnce();
  return built;
}

function buildOnce(): { args: string[]; how: string } {
  if (env.BENCH_SERVER !== 'tsx') {
    log('Build: npx tsc -p tsconfig.build.json');
    const started = performance.now();
    const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    if (build.status === 0 && existsSync(path.join(ROOT, 'dist', 'server.js'))) {
      log(`Build: ok in ${seconds} s`);
      // The server as it is deployed (scripts/server-node-flags.ts), unless BENCH_NODE_FLAGS says otherwise.
      const flags = env.BENCH_NODE_FLAGS === undefined ? [...SERVER_NODE_FLAGS] : env.BENCH_NODE_FLAGS.split(/\s+/).filter(Boolean);
      return { args: [...flags, 'dist/server.js'], how: ['node', ...flags, 'dist/server.js'].join(' ') };
    }
    const output = `${build.stdout ?? ''}${build.stderr ?? ''}`.trim().split('\n').slice(0, 10).join('\n');
    log(`Build: failed after ${seconds} s, falling back to tsx. First lines:\n${output}`);
  }
  return { args: ['--import', 'tsx', 'src/server.ts'], how: 'node --import tsx src/server.ts (build failed or BENCH_SERVER=tsx)' };
}

interface Server {
  child: ChildProcess;
  url: string;
  how: string;
  logFile: string;
  stop(): Promise<void>;
}

async function startServer(
  databaseUrl: string,
  workDir: string,
  extraEnv: Record<string, string> = {},
  command: { args: string[]; how: string } = serverCommand(),
): Promise<Server> {
  const { args, how } = command;
  const port = await freePort();
  const logFile = path.join(workDir, 'server.log');
  const out = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', out, out],
    env: {
      ...env,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
      DATABASE_POOL_SIZE: '32',
      DATA_DIR: workDir,
      UPLOAD_DIR: path.join(workDir, 'uploads'),
      STORAGE_DRIVER: 'local',
      // D1 delivers to a receiver on 127.0.0.1.
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ...extraEnv,
    },
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited) throw new Error(`the server exited during start; log:\n${tail(logFile)}`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the server was not ready within 90 s; log:\n${tail(logFile)}`);
    await sleep(250);
  }
  log(`Server: ${how}, pid ${child.pid}, ${url}`);
  return {
    child,
    url,
    how,
    logFile,
    async stop() {
      if (exited) return;
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await done;
      clearTimeout(timer);
    },
  };
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** VmRSS of a process in MiB, or null when it cannot be read. */
function rssMiB(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** CPU time (user + system) of a process in ms, or 0 when it cannot be read (it ended). */
function cpuTimeMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the pid and the name; in clock ticks (100/s).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** The PostgreSQL backends of the API and of the reference server (by their application names; one of them runs at a time). */
async function backendPids(databaseUrl: string | undefined): Promise<number[]> {
  if (!databaseUrl) return [];
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
    const result = await client.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and application_name in ('field-service-crm-api', 'bench-reference')`,
    );
    return result.rows.map((row) => row.pid);
  } catch {
    return [];
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** CPU time of the processes since it was made, in ms. */
function cpuMeter(pids: number[]) {
  const start = pids.map(cpuTimeMs);
  return () => pids.reduce((sum, pid, index) => sum + Math.max(0, cpuTimeMs(pid) - start[index]), 0);
}

/** The largest RSS any of the processes reaches while it runs. */
function rssSampler(pids: number[]) {
  let max = 0;
  const sample = () => {
    for (const pid of pids) {
      const value = rssMiB(pid);
      if (value !== null && value > max) max = value;
    }
  };
  sample();
  const timer = setInterval(sample, 200);
  return {
    stop() {
      clearInterval(timer);
      return max;
    },
  };
}

/** The fixed samples of ids the scenarios pick from (deterministic: ordered by a hash of the id). */
async function loadContext(databaseUrl: string, seed: SeedInfo, schedule?: ScheduleSeed): Promise<BenchContext> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const customers = await client.query<{ uuid: string }>(
      `select uuid from customers where company_id = $1 and deleted_at is null and created_at < '2030-01-01'
       order by md5(uuid::text) limit 5000`,
      [seed.companyUuid],
    );
    // E1's `after` values: 1,000 events at random positions of the feed, none in its last 100.
    const feed = await client.query<{ uuid: string }>(
      `select uuid from (select uuid, row_number() over (order by txid, seq) as position, count(*) over () as total
                           from events where company_id = $1) feed
        where position <= total - 100 order by random() limit 1000`,
      [seed.companyUuid],
    );
    // W3 is measured without any webhook endpoint: end any a run that was cut short left behind.
    const stray = await client.query(
      'update webhook_endpoints set deleted_at = now(), enabled = false where company_id = $1 and deleted_at is null',
      [seed.companyUuid],
    );
    if (stray.rowCount) log(`Removed ${stray.rowCount} webhook endpoint(s) left by an earlier run`);
    const jobs = await client.query<{ uuid: string; customer: string }>(
      `select uuid, customer_uuid as customer from jobs where company_id = $1 and deleted_at is null and created_at < '2030-01-01'
       order by md5(uuid::text) limit 5000`,
      [seed.companyUuid],
    );
    return {
      apiKey: seed.apiKey,
      companyId: seed.companyUuid,
      customers: customers.rows.map((row) => row.uuid),
      jobs: jobs.rows,
      bigInvoiceUuid: seed.bigInvoiceUuid,
      feedAfter: feed.rows.map((row) => row.uuid),
      ...(schedule ? { schedule: { ...schedule, companyId: schedule.companyUuid } } : {}),
    };
  } finally {
    await client.end();
  }
}

/** One request as the scenario would send it; a 404 naming no route means the endpoint is not built yet. */
async function probe(url: string, request: AutocannonRequest): Promise<{ status: number; body: string }> {
  const built = request.setupRequest ? request.setupRequest({ ...request }, {}) : request;
  const response = await fetch(`${url}${built.path ?? '/'}`, {
    method: built.method ?? 'GET',
    headers: built.headers,
    body: built.body,
  });
  return { status: response.status, body: await response.text() };
}

/** Where a scenario's requests go: one server, or the cluster's balancer with its instances' pids. */
interface Target {
  url: string;
  pids: number[];
}

async function runScenario(server: Target, scenario: Scenario, databaseUrl?: string): Promise<Row> {
  const row: Row = { id: scenario.id, title: scenario.title };
  try {
    if (scenario.setup) {
      if (!databaseUrl) throw new Error(`${scenario.id} needs the database URL for its setup`);
      const prepared = await scenario.setup({ url: server.url, databaseUrl, log });
      try {
        return await measure(server, scenario, row, databaseUrl);
      } finally {
        row.note = await prepared.teardown();
      }
    }
    return await measure(server, scenario, row, databaseUrl);
  } finally {
    if (databaseUrl) await removeBenchCustomers(databaseUrl);
  }
}

/**
 * Removes the customers the create scenarios made (their emails are bench<n>@example.com; the seed's are
 * not), in the API's table and the reference server's copy, so that every scenario, and every run, lists
 * and counts the seeded size the marks are stated for. Their events stay. Nothing refers to them, so the
 * foreign-key checks are skipped (session_replication_role; the child tables' customer indexes are partial
 * and cannot serve those checks), and the companies' customer counts are taken again instead of by the
 * trigger. Then the tables the writes churn are vacuumed.
 */
async function removeBenchCustomers(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('begin');
    await client.query(`set local session_replication_role = replica`);
    const { rows } = await client.query<{ company_id: string }>(
      `delete from customers where email like 'bench%@example.com' returning company_id`,
    );
    const companies = [...new Set(rows.map((row) => row.company_id))];
    if (companies.length > 0) {
      await client.query(`delete from record_counts where table_name = 'customers' and company_id = any($1::uuid[])`, [companies]);
      await client.query(
        `insert into record_counts (company_id, table_name, shard, live, deleted)
         select company_id, 'customers', 0, count(*) filter (where deleted_at is null), count(*) filter (where deleted_at is not null)
         from customers where company_id = any($1::uuid[]) group by company_id`,
        [companies],
      );
    }
    if ((await client.query(`select to_regclass('tight_customers') is not null as present`)).rows[0].present) {
      await client.query(`delete from tight_customers where email like 'bench%@example.com'`);
    }
    if ((await client.query(`select to_regclass('tight_events') is not null as present`)).rows[0].present) {
      await client.query(`truncate tight_events`);
    }
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
  await quiesce(databaseUrl);
}

/**
 * Leaves the database as a fresh scenario should find it. The tables every write churns are vacuumed as
 * autovacuum would (a server run with autovacuum off, as CI's is, otherwise leaves each scenario the dead
 * rows of the ones before it), and a checkpoint writes out the dirty pages of the writes before, so that no
 * scenario pays for an earlier one's checkpoint.
 */
async function quiesce(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // A scenario whose statements outlast it (T1's counts queue for seconds at 32 connections) would still be
    // running in the next one: wait, up to a minute, until no other backend of the database is busy.
    for (let waited = 0; waited < 60_000; waited += 100) {
      const { rows } = await client.query<{ busy: number }>(
        `select count(*)::int as busy from pg_stat_activity
          where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`,
      );
      if (rows[0].busy === 0) break;
      await sleep(100);
    }
    // The reference server's tables exist once a run has used it.
    const { rows: present } = await client.query<{ name: string }>(
      `select name from unnest($1::text[]) as name where to_regclass(name) is not null`,
      [CHURNED_TABLES],
    );
    await client.query(`vacuum ${present.map((row) => row.name).join(', ')}`);
    await client.query('checkpoint');
  } finally {
    await client.end();
  }
}

const CHURNED_TABLES = [
  'customers',
  // The reference server's creates, removed after each of its scenarios.
  'tight_customers',
  'tight_events',
  'jobs',
  'invoices',
  'payments',
  'events',
  'webhook_deliveries',
  'numbering_counters',
  'record_counts',
  'usage_counters',
  // V2's bookings.
  'visits',
  'visit_assignees',
  'schedule_holds',
];

async function measure(server: Target, scenario: Scenario, row: Row, databaseUrl?: string): Promise<Row> {
  const sample = await probe(server.url, scenario.request);
  if (sample.status === 404 && /No route for/.test(sample.body)) {
    row.skipped = 'n/a (no route)';
    log(`${scenario.id}: skipped, the endpoint answers 404 for the route`);
    return row;
  }
  if (sample.status < 200 || sample.status > 299) {
    log(`${scenario.id}: probe answered ${sample.status}: ${sample.body.slice(0, 300)}`);
  }
  const options = {
    url: server.url,
    connections: CONNECTIONS,
    timeout: 30,
    requests: [scenario.request],
  };
  const warm = WARMUP > 0 ? await autocannon({ ...options, duration: WARMUP }) : null;
  row.okAll = (warm?.['2xx'] ?? 0);
  const sampler = rssSampler(server.pids);
  const nodeCpu = cpuMeter(server.pids);
  const postgresCpu = cpuMeter(await backendPids(databaseUrl));
  const result = await autocannon({ ...options, duration: DURATION });
  const served = Math.max(1, result.requests.total);
  row.cpuMs = { node: nodeCpu() / served, postgres: postgresCpu() / served };
  row.ok = result['2xx'];
  row.okAll += result['2xx'];
  row.maxRssMiB = sampler.stop();
  row.rps = result.requests.average;
  row.p50 = result.latency.p50;
  row.p99 = result.latency.p99;
  row.errors = result.non2xx + result.errors + result.timeouts;
  row.statuses = Object.entries(result.statusCodeStats ?? {})
    .map(([status, stat]) => `${status}: ${stat.count}`)
    .join(', ');
  log(
    `${scenario.id}: ${fmt(row.rps)} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, errors ${row.errors}` +
      ` (${row.statuses}), max RSS ${fmt(row.maxRssMiB)} MiB, CPU per request ${row.cpuMs.node.toFixed(2)} ms Node` +
      ` + ${row.cpuMs.postgres.toFixed(2)} ms PostgreSQL`,
  );
  return row;
}

/** The scenario's SQL through a pg.Pool of CONNECTIONS, by as many concurrent loops, for DURATION. */
async function runSql(databaseUrl: string, baseline: SqlBaseline): Promise<Row['sql']> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: CONNECTIONS, application_name: 'crm-bench-sql' });
  pool.on('error', () => undefined);
  try {
    const loop = async (seconds: number, latencies: number[] | null) => {
      let errors = 0;
      const end = performance.now() + seconds * 1000;
      const worker = async () => {
        while (performance.now() < end) {
          const started = performance.now();
          try {
            await baseline.run(pool);
            latencies?.push(performance.now() - started);
          } catch {
            errors += 1;
          }
        }
      };
      const started = performance.now();
      await Promise.all(Array.from({ length: CONNECTIONS }, worker));
      return { errors, seconds: (performance.now() - started) / 1000 };
    };
    if (WARMUP > 0) await loop(WARMUP, null);
    const latencies: number[] = [];
    const { errors, seconds } = await loop(DURATION, latencies);
    latencies.sort((a, b) => a - b);
    const at = (q: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] : 0);
    return { rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), errors };
  } finally {
    await pool.end();
  }
}

/**
 * The scenarios measured through the cluster beside one instance; T2 is the reference server's W2, run
 * the same way (three reference servers behind the same HAProxy and PgBouncer, beside one).
 */
const CLUSTER_SCENARIOS = ['I1', 'P1', 'W2', 'T2'];

const REFERENCE_SERVER = { args: ['--import', 'tsx', 'bench/tight-server.ts'], how: 'reference server (bench/tight-server.ts)' };

interface Check {
  ok: boolean;
  text: string;
}

/** What the database holds before a writing scenario, to check afterwards what the scenario wrote. */
async function stateBefore(databaseUrl: string, seed: SeedInfo) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ now: Date; balance: string }>(
      'select now() as now, (select balance_amount::text from invoices where uuid = $1) as balance',
      [seed.bigInvoiceUuid],
    );
    return rows[0];
  } finally {
    await client.end();
  }
}

/**
 * Correctness of what a scenario wrote: I1's invoices got consecutive numbers without gaps; P1's payments
 * each took exactly 1.00 off the one invoice, never below zero. Every 2xx wrote one row; the probe before the
 * warm-up writes one unseen, and autocannon stops with up to CONNECTIONS requests in flight after the warm-up
 * and after the run, which the server still completes unseen, so there may be that many more rows than 2xx.
 */
async function checkScenario(databaseUrl: string, seed: SeedInfo, row: Row, before: { now: Date; balance: string }): Promise<Check> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    if (row.id === 'I1') {
      const { rows } = await client.query<{ number: string }>(
        'select invoice_number as number from invoices where company_id = $1 and created_at >= $2',
        [seed.companyUuid, before.now],
      );
      const numbers = rows.map((r) => Number(r.number.replace(/\D/g, ''))).sort((a, b) => a - b);
      const gapless = numbers.every((number, index) => index === 0 || number === numbers[index - 1] + 1);
      const ok = gapless && withinInFlight(numbers.length, row.okAll ?? 0);
      const range = numbers.length ? `${numbers[0]}-${numbers[numbers.length - 1]}` : 'none';
      return { ok, text: `${numbers.length} invoices for ${row.okAll} 2xx, numbers ${range}${gapless ? ' consecutive' : ' WITH GAPS'}` };
    }
    if (row.id === 'P1') {
      const { rows } = await client.query<{ created: number; balance: string; drop: string }>(
        `select (select count(*)::int from payments where invoice_uuid = $1 and created_at >= $2) as created,
                balance_amount::text as balance, ($3::numeric - balance_amount)::text as drop
           from invoices where uuid = $1`,
        [seed.bigInvoiceUuid, before.now, before.balance],
      );
      const { created, balance, drop } = rows[0];
      const ok = withinInFlight(created, row.okAll ?? 0) && Number(drop) === created && Number(balance) >= 0;
      return { ok, text: `${created} payments for ${row.okAll} 2xx, balance down ${drop}, now ${balance}` };
    }
    return { ok: (row.errors ?? 0) === 0, text: row.errors ? `${row.errors} errors` : 'read only, no errors' };
  } finally {
    await client.end();
  }
}

const withinInFlight = (written: number, answered: number) => written >= answered && written <= answered + 1 + 2 * CONNECTIONS;

interface ClusterRow {
  id: string;
  title: string;
  single?: Row;
  cluster?: Row;
  singleCheck?: Check;
  clusterCheck?: Check;
}

/**
 * I1, P1 and W2 through 3 instances, HAProxy and PgBouncer (transaction mode), beside one instance; T2 the
 * same way with the reference server.
 */
async function runClusterComparison(databaseUrl: string, seed: SeedInfo, scenarios: Scenario[], server: 'dist' | 'tsx'): Promise<ClusterRow[]> {
  const chosen = scenarios.filter((scenario) => CLUSTER_SCENARIOS.includes(scenario.id));
  if (chosen.length === 0) return [];
  const rows = new Map<Scenario, ClusterRow>(chosen.map((scenario) => [scenario, { id: scenario.id, title: scenario.title }]));
  const groups = [
    { scenarios: chosen.filter((scenario) => scenario.server !== 'tight'), reference: false },
    { scenarios: chosen.filter((scenario) => scenario.server === 'tight'), reference: true },
  ].filter((group) => group.scenarios.length > 0);
  if (groups.some((group) => group.reference)) await ensureTightTable(databaseUrl);
  // Each scenario checked after its run.
  const measure = async (target: Target, scenario: Scenario, side: 'single' | 'cluster') => {
    await quiesce(databaseUrl);
    const before = await stateBefore(databaseUrl, seed);
    const row = rows.get(scenario)!;
    row[side] = await runScenario(target, scenario);
    row[side === 'single' ? 'singleCheck' : 'clusterCheck'] = await checkScenario(databaseUrl, seed, row[side]!, before);
  };
  // One instance first, on a fresh process, then the cluster.
  for (const group of groups) {
    const workDir = mkdtempSync(path.join(os.tmpdir(), 'crm-bench-single-'));
    const single = group.reference
      ? await startServer(databaseUrl, workDir, { COMPANY_ID: seed.companyUuid }, REFERENCE_SERVER)
      : await startServer(databaseUrl, workDir);
    try {
      for (const scenario of group.scenarios) await measure({ url: single.url, pids: [single.child.pid!] }, scenario, 'single');
    } finally {
      await single.stop();
      rmSync(workDir, { recursive: true, force: true });
    }
  }
  for (const group of groups) {
    let cluster: Cluster | undefined;
    try {
      cluster = await startCluster({
        databaseUrl,
        instances: 3,
        server: group.reference ? { args: REFERENCE_SERVER.args } : server,
        // The same 32 PostgreSQL connections as the one instance, shared through PgBouncer.
        instancePoolSize: Math.ceil(CONNECTIONS / 3) + 1,
        pgbouncerPoolSize: CONNECTIONS,
        redisUrl: env.REDIS_URL || undefined,
        env: { NODE_ENV: 'production', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', STORAGE_DRIVER: 'local', COMPANY_ID: seed.companyUuid },
      });
      log(`Cluster: 3 instances (${group.reference ? REFERENCE_SERVER.how : server}) behind HAProxy ${cluster.url}, PgBouncer transaction mode`);
      const target: Target = { url: cluster.url, pids: cluster.instances.map((instance) => instance.child.pid!) };
      for (const scenario of group.scenarios) await measure(target, scenario, 'cluster');
    } finally {
      await cluster?.stop();
    }
  }
  for (const row of rows.values()) {
    const ratio = row.single?.rps && row.cluster?.rps !== undefined ? row.cluster.rps / row.single.rps : undefined;
    log(
      `${row.id} cluster/single: ${fmt(row.cluster?.rps)} / ${fmt(row.single?.rps)} req/s = ${ratio?.toFixed(2) ?? '?'}x; ` +
        `single ${row.singleCheck?.ok ? 'correct' : 'WRONG'} (${row.singleCheck?.text}), cluster ${row.clusterCheck?.ok ? 'correct' : 'WRONG'} (${row.clusterCheck?.text})`,
    );
  }
  return [...rows.values()];
}

function clusterTable(rows: ClusterRow[]): string {
  const lines = [
    '| scenario | 1 instance req/s | p99 ms | cluster req/s | p99 ms | cluster / 1 | errors (1 / cluster) | correct (1 / cluster) | max RSS MiB per instance (1 / cluster) |',
    '|---|---:|---:|---:|---:|---:|---:|---|---:|',
  ];
  for (const row of rows) {
    const ratio = row.single?.rps && row.cluster?.rps !== undefined ? (row.cluster.rps / row.single.rps).toFixed(2) : '';
    // Retired (issue 28): three instances, a balancer and a pooler on two shared cores cannot be free; the
    // reference server's own ratio (T2) is printed beside it.
    const mark = row.id === 'W2' && ratio ? ` (retired mark, informational; was >= 0.7: ${Number(ratio) >= 0.7 ? 'met' : 'not met'})` : '';
    const correct = (check?: Check) => (check ? (check.ok ? 'yes' : 'NO') : '');
    lines.push(
      `| ${row.id} ${row.title} | ${fmt(row.single?.rps)} | ${fmt(row.single?.p99)} | ${fmt(row.cluster?.rps)} | ${fmt(row.cluster?.p99)} | ` +
        `${ratio}${mark} | ${fmt(row.single?.errors)} / ${fmt(row.cluster?.errors)} | ${correct(row.singleCheck)} / ${correct(row.clusterCheck)} | ` +
        `${fmt(row.single?.maxRssMiB)} / ${fmt(row.cluster?.maxRssMiB)} |`,
    );
  }
  const checks = rows.flatMap((row) => [
    `- ${row.id} one instance: ${row.singleCheck?.text ?? ''}`,
    `- ${row.id} cluster: ${row.clusterCheck?.text ?? ''}`,
  ]);
  return [...lines, '', ...checks].join('\n');
}

/**
 * The reference server's tables: a copy of the seeded customers with one index, the list order
 * (company_id, created_at desc, uuid desc), and no trigger; an empty copy of the events table with its
 * columns, defaults and indexes (the feed's order, the object filter, the retention) but no foreign keys.
 * Made once per bench database (what the reference server's creates add is removed after each scenario,
 * like the API's).
 */
async function ensureTightTable(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`create table if not exists tight_events (like events including all)`);
    const { rows } = await client.query<{ ready: boolean }>(`select to_regclass('tight_customers_order_idx') is not null as ready`);
    if (rows[0].ready) return;
    const started = performance.now();
    await client.query(`drop table if exists tight_customers`);
    await client.query(`create table tight_customers (like customers including defaults)`);
    await client.query(`insert into tight_customers select * from customers`);
    await client.query(`create index tight_customers_order_idx on tight_customers (company_id, created_at desc, uuid desc)`);
    await client.query(`vacuum analyze tight_customers`);
    log(`Reference table: tight_customers copied in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await client.end();
  }
}

/** The ratios of this run (W3H / W3, E1 / W1, W1 / T1, ...), against their marks. */
function ratioLines(rows: Row[]): string[] {
  const lines: string[] = [];
  for (const { id, of, mark, retired } of RATIOS) {
    const a = rows.find((row) => row.id === id);
    const b = rows.find((row) => row.id === of);
    if (!a?.rps || !b?.rps) continue;
    const ratio = a.rps / b.rps;
    const verdict =
      mark === undefined
        ? ''
        : retired
          ? ` (${retired}; was >= ${mark.toFixed(2)}x)`
          : ` (mark >= ${mark.toFixed(2)}x: ${ratio >= mark ? 'met' : 'NOT met'})`;
    // On a shared host the throughput of two scenarios a minute apart moves with the neighbours; the CPU each
    // request cost (Node + PostgreSQL, both servers metered alike) moves less and is printed beside it.
    const cpu = (row: Row) => (row.cpuMs ? row.cpuMs.node + row.cpuMs.postgres : 0);
    const byCpu = cpu(a) > 0 && cpu(b) > 0 ? `; by CPU a request ${(cpu(b) / cpu(a)).toFixed(2)}x (${cpu(a).toFixed(2)} / ${cpu(b).toFixed(2)} ms)` : '';
    lines.push(`${id} / ${of}: ${fmt(a.rps)} / ${fmt(b.rps)} req/s = ${ratio.toFixed(2)}x${verdict}${byCpu}`);
  }
  // The API's own scenarios (the reference server's are T*): the largest RSS any of them reached.
  const measured = rows.filter((row) => !row.id.startsWith('T') && row.maxRssMiB !== undefined);
  if (measured.length > 0) {
    const top = measured.reduce((a, b) => (b.maxRssMiB! > a.maxRssMiB! ? b : a));
    const verdict = top.maxRssMiB! < MAX_RSS_MIB ? 'met' : 'NOT met';
    lines.push(`Max RSS of the API's server: ${fmt(top.maxRssMiB)} MiB, in ${top.id} (mark < ${MAX_RSS_MIB} MiB: ${verdict})`);
  }
  return lines;
}

/** X1's line: company B's W2 alone and beside company A's PDF loop, and the mark on B's p99. */
function noisyLine(result: NoisyNeighbourResult): string {
  const { alone, noisy, pdf, ratio } = result;
  return (
    `X1 noisy neighbour: company B's W2 p99 ${fmt(noisy.p99)} ms beside 4 clients rendering company A's 1,000-line PDF ` +
    `(${fmt(pdf.rps, 1)} PDFs/s, p99 ${fmt(pdf.p99)} ms, ${pdf.statuses}) against ${fmt(alone.p99)} ms alone = ${ratio.toFixed(2)}x ` +
    `(mark <= 2.00x: ${ratio <= 2 ? 'met' : 'NOT met'}); B's req/s ${fmt(noisy.rps)} against ${fmt(alone.rps)}, errors ${noisy.errors} / ${alone.errors}`
  );
}

function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || Number.isNaN(value)) return '';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function table(rows: Row[]): string {
  const lines = [
    '| scenario | req/s | p50 ms | p99 ms | errors | max RSS MiB | SQL req/s | ratio |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const name = `${row.id} ${row.title}`;
    if (row.skipped) {
      lines.push(`| ${name} | n/a | n/a | n/a | n/a | n/a | ${row.sql ? fmt(row.sql.rps) : ''} | |`);
      continue;
    }
    const ratio = row.sql && row.rps !== undefined && row.sql.rps > 0 ? `${(row.rps / row.sql.rps).toFixed(2)}` : '';
    lines.push(
      `| ${name} | ${fmt(row.rps)} | ${fmt(row.p50)} | ${fmt(row.p99)} | ${fmt(row.errors)} | ${fmt(row.maxRssMiB)} | ` +
        `${row.sql ? fmt(row.sql.rps) : ''} | ${ratio} |`,
    );
  }
  return lines.join('\n');
}

function sqlTable(rows: Row[]): string {
  const lines = ['| SQL baseline | req/s | p50 ms | p99 ms | errors |', '|---|---:|---:|---:|---:|'];
  for (const row of rows) {
    if (!row.sql) continue;
    lines.push(
      `| ${row.id} | ${fmt(row.sql.rps)} | ${fmt(row.sql.p50, 2)} | ${fmt(row.sql.p99, 2)} | ${fmt(row.sql.errors)} |`,
    );
  }
  return lines.join('\n');
}

interface WrkRow {
  id: string;
  title: string;
  result: WrkResult;
}

function wrkTable(rows: WrkRow[]): string {
  const lines = ['| scenario | req/s | p50 ms | p99 ms | errors |', '|---|---:|---:|---:|---:|'];
  for (const { id, title, result } of rows) {
    lines.push(`| ${id} ${title} | ${fmt(result.rps)} | ${fmt(result.p50, 1)} | ${fmt(result.p99, 1)} | ${fmt(result.errors)} |`);
  }
  const rpsOf = (id: string) => rows.find((row) => row.id === id)?.result.rps;
  const ratios = WRK_PAIRS.flatMap(({ scenario, base, mark }) => {
    const [measured, reference] = [rpsOf(scenario), rpsOf(base)];
    if (!measured || !reference) return [];
    const ratio = measured / reference;
    return [`- ${scenario} / ${base} through wrk: ${fmt(measured)} / ${fmt(reference)} req/s = ${ratio.toFixed(2)}x (mark >= ${mark.toFixed(2)}x: ${ratio >= mark ? 'met' : 'NOT met'})`];
  });
  if (ratios.length > 0) lines.push('', ...ratios);
  return lines.join('\n');
}

function machine(): string {
  const cpus = os.cpus();
  const memory = (os.totalmem() / 1024 ** 3).toFixed(1);
  const load = os.loadavg().map((value) => value.toFixed(2)).join(' ');
  return `${os.availableParallelism()} CPUs (${cpus[0]?.model.trim() ?? 'unknown'}), ${memory} GiB RAM, Node ${process.version}, load average at the end ${load}`;
}

async function main() {
  const size = sizeFromEnv();
  const urls = benchUrls();
  const seed = await ensureSeed(size);
  if (ONLY.length === 0 || ONLY.includes('E1') || ONLY.includes('E2')) {
    const feed = await ensureEvents(urls.bench, seed.companyUuid, EVENTS);
    log(`Events: ${fmt(feed.events)} in the large company's feed` + (feed.added ? ` (${fmt(feed.added)} added in ${feed.seconds.toFixed(1)} s)` : ''));
  }
  const schedule = ONLY.length === 0 || ['V1', 'V2', 'A1'].some((id) => ONLY.includes(id)) ? await ensureSchedule(urls.bench) : undefined;
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'crm-bench-'));
  let server: Server | undefined;
  let reference: Server | undefined;
  const rows: Row[] = [];
  let clusterRows: ClusterRow[] = [];
  let clusterSkipped: string | undefined;
  const wrkRows: WrkRow[] = [];
  let noisy: NoisyNeighbourResult | undefined;
  let wrkSkipped: string | undefined;
  const startedAt = new Date();
  try {
    server = await startServer(urls.bench, workDir);
    await removeBenchCustomers(urls.bench);
    const context = await loadContext(urls.bench, seed, schedule);
    const scenarios = buildScenarios(context).filter((scenario) => ONLY.length === 0 || ONLY.includes(scenario.id));
    log(`Run: ${scenarios.length} scenarios, ${CONNECTIONS} connections, ${DURATION} s each after a ${WARMUP} s warm-up`);
    const single: Target = { url: server.url, pids: [server.child.pid!] };
    const tight = scenarios.filter((scenario) => scenario.server === 'tight');
    if (tight.length > 0) {
      await ensureTightTable(urls.bench);
      reference = await startServer(urls.bench, workDir, { COMPANY_ID: context.companyId }, REFERENCE_SERVER);
    }
    const onReference = (scenario: Scenario) => runScenario({ url: reference!.url, pids: [reference!.child.pid!] }, scenario, urls.bench);
    for (const scenario of scenarios) {
      if (scenario.server) continue;
      rows.push(await runScenario(single, scenario, urls.bench));
      for (const yardstick of tight.filter((candidate) => candidate.after === scenario.id)) rows.push(await onReference(yardstick));
    }
    const inRun = (id: string) => scenarios.some((scenario) => scenario.id === id);
    const wrkIds = new Set<string>(WRK_PAIRS.filter((pair) => inRun(pair.scenario) && inRun(pair.base)).flatMap((pair) => [pair.base, pair.scenario]));
    const throughWrk = scenarios.filter((scenario) => wrkIds.has(scenario.id));
    if (throughWrk.length > 0) {
      if (!wrkInstalled()) {
        wrkSkipped = 'skipped: wrk is not installed (apt-get install wrk)';
      } else {
        for (const scenario of throughWrk) {
          await quiesce(urls.bench);
          const result = await runWrk(server.url, scenario.request, CONNECTIONS, DURATION);
          wrkRows.push({ id: scenario.id, title: scenario.title, result });
          log(`${scenario.id} through wrk: ${fmt(result.rps)} req/s, p50 ${fmt(result.p50, 1)} ms, p99 ${fmt(result.p99, 1)} ms, errors ${result.errors}`);
        }
      }
    }
    if (ONLY.length === 0 || ONLY.includes('D1')) {
      const row: Row = { id: 'D1', title: `webhook deliveries (${fmt(DELIVERIES)} to a local receiver; req/s = deliveries/s)` };
      const sampler = rssSampler([server.child.pid!]);
      const result = await measureDeliveries({
        serverUrl: server.url,
        databaseUrl: urls.bench,
        apiKey: context.apiKey,
        companyId: context.companyId,
        count: DELIVERIES,
        log,
      });
      row.maxRssMiB = sampler.stop();
      row.rps = result.perSecond;
      row.errors = result.errors;
      log(`D1: ${fmt(result.perSecond)} deliveries/s (${result.deliveries} in ${result.seconds.toFixed(2)} s), errors ${result.errors}`);
      rows.push(row);
    }
    const rssAfter = rssMiB(server.child.pid!);
    await server.stop();
    if (rssAfter !== null) log(`Server RSS at the end: ${fmt(rssAfter)} MiB`);

    const noWorker = scenarios.filter((scenario) => scenario.server === 'no-worker');
    if (noWorker.length > 0) {
      const second = await startServer(urls.bench, workDir, { WEBHOOK_WORKER_ENABLED: 'false' });
      log('Second server: WEBHOOK_WORKER_ENABLED=false');
      // A fresh process is slower for its first seconds (JIT, pool connections); warm it on the first
      // scenario's request so that the first of the pair is not measured colder than the second.
      await autocannon({ url: second.url, connections: CONNECTIONS, duration: Math.max(WARMUP, 3), requests: [noWorker[0].request] });
      try {
        for (const scenario of noWorker) rows.push(await runScenario({ url: second.url, pids: [second.child.pid!] }, scenario, urls.bench));
      } finally {
        await second.stop();
      }
    }
    // A reference scenario whose counterpart is not in this run (BENCH_ONLY=T2) runs on its own.
    for (const scenario of tight.filter((candidate) => !scenarios.some((other) => !other.server && other.id === candidate.after))) {
      rows.push(await onReference(scenario));
    }
    await reference?.stop();
    reference = undefined;
    if (ONLY.length === 0 || ONLY.includes('X1')) {
      // A server of its own without the PDF cache, so that every PDF request of the loop renders.
      const noisyServer = await startServer(urls.bench, workDir, { PDF_CACHE_BYTES: '0' });
      try {
        noisy = await measureNoisyNeighbour({
          url: noisyServer.url,
          databaseUrl: urls.bench,
          apiKey: context.apiKey,
          job: context.jobs[0],
          connections: CONNECTIONS,
          duration: DURATION,
          warmup: WARMUP,
          log,
        });
        log(noisyLine(noisy));
      } finally {
        await noisyServer.stop();
      }
    }
    for (const line of ratioLines(rows)) log(line);

    if (env.BENCH_SQL !== '0') {
      for (const scenario of scenarios) {
        if (!scenario.sql) continue;
        const row = rows.find((candidate) => candidate.id === scenario.id)!;
        row.sql = await runSql(urls.bench, scenario.sql);
        log(`${scenario.id} SQL: ${fmt(row.sql!.rps)} req/s, p50 ${fmt(row.sql!.p50, 2)} ms, p99 ${fmt(row.sql!.p99, 2)} ms`);
      }
    }

    if (env.BENCH_CLUSTER !== '0') {
      const missing = missingPrograms();
      if (missing.length > 0) {
        clusterSkipped = `skipped: ${missing.join(' and ')} not installed (apt-get install ${missing.join(' ')})`;
        log(`Cluster comparison ${clusterSkipped}`);
      } else {
        const how: 'dist' | 'tsx' = server.how.includes('dist/server.js') ? 'dist' : 'tsx';
        clusterRows = await runClusterComparison(urls.bench, seed, scenarios, how);
      }
    }
  } finally {
    await server?.stop().catch(() => undefined);
    await reference?.stop().catch(() => undefined);
    if (env.BENCH_KEEP_UPLOADS !== '1') rmSync(workDir, { recursive: true, force: true });
  }

  const report = [
    '# Benchmark results',
    '',
    `- Date: ${startedAt.toISOString()}`,
    `- Machine: ${machine()}`,
    `- Seed: ${describeSize(size)} (${seed.reused ? `reused; seeded in ${seed.seedSeconds.toFixed(1)} s` : `seeded in ${seed.seedSeconds.toFixed(1)} s`})`,
    `- Load: ${CONNECTIONS} connections, ${DURATION} s per scenario after a ${WARMUP} s warm-up; server: ${server?.how ?? '?'}`,
    '- errors = non-2xx responses + socket errors + timeouts; max RSS = the server process, sampled every 200 ms;',
    '  SQL req/s = the same SQL through pg directly (pool of the same size, same duration); ratio = req/s / SQL req/s.',
    '',
    table(rows),
    '',
    ...ratioLines(rows).map((line) => `- ${line}`),
    ...rows.filter((row) => row.note).map((row) => `- ${row.id}: ${row.note}`),
    ...(noisy ? [`- ${noisyLine(noisy)}`] : []),
    '',
    sqlTable(rows),
    '',
    ...(wrkRows.length > 0 || wrkSkipped
      ? [
          '## Large answers through wrk',
          '',
          'The same scenarios on the same server, right after the runs above, with wrk (C, 2 threads, the same',
          'connections and duration) as the load generator: autocannon parses every answer in JavaScript on the same',
          'cores as the server, which costs more for the larger answers of E1 and V1 than for W1\'s and W2\'s.',
          '',
          wrkSkipped ?? wrkTable(wrkRows),
          '',
        ]
      : []),
    ...(clusterRows.length > 0 || clusterSkipped
      ? [
          '## Cluster beside one instance',
          '',
          '3 instances behind HAProxy (round robin) with PgBouncer in transaction mode (32 server connections in all,',
          'as the one instance has), against one instance, in this run; each writing scenario is checked afterwards.',
          '',
          clusterSkipped ?? clusterTable(clusterRows),
          '',
        ]
      : []),
  ].join('\n');
  writeFileSync(RESULTS, report);
  log('');
  log(report);
  log(`Written to ${path.relative(process.cwd(), RESULTS) || RESULTS}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
