/**
 * A local scale-out deployment on loopback ports: N API processes behind HAProxy (deploy/haproxy.cfg, with
 * this cluster's ports), PgBouncer in transaction pooling mode between them and PostgreSQL, and the
 * rate-limit counters in Redis when a REDIS_URL is given. Used by `npm run cluster`, the cluster test and
 * the bench. Configuration files live in a temporary directory removed on stop.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, constants, createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SERVER_NODE_FLAGS } from './server-node-flags.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SBIN = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

/** The full path of a program on PATH or in the sbin directories (Debian installs both daemons there). */
export function findProgram(name: string): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), ...SBIN]) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** The packages the cluster needs that are not installed. */
export function missingPrograms(): string[] {
  return ['haproxy', 'pgbouncer'].filter((name) => findProgram(name) === null);
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ClusterOptions {
  /** A direct PostgreSQL URL of the database the instances use (migrations run over it). */
  databaseUrl: string;
  /** Number of API processes; default 3. */
  instances?: number;
  /**
   * `tsx` runs src/server.ts; `dist` runs the built dist/server.js (build it first); `{ args }` runs another
   * server with these Node arguments and the same environment (the bench's reference server). Default tsx.
   */
  server?: 'tsx' | 'dist' | { args: string[] };
  /** The balancer's port; default a free one. */
  port?: number;
  /** Shared rate-limit store; without it each instance counts on its own. */
  redisUrl?: string;
  /** Connections of each instance's pool to PgBouncer; default 10. */
  instancePoolSize?: number;
  /** Server connections PgBouncer keeps per database; default 20. */
  pgbouncerPoolSize?: number;
  statementTimeoutMs?: number;
  /** More environment for the instances. */
  env?: Record<string, string>;
  /** `inherit`: instance and daemon output goes to this process's stdout, prefixed; default: log files. */
  output?: 'inherit' | 'files';
  log?: (line: string) => void;
}

export interface ClusterInstance {
  name: string;
  url: string;
  child: ChildProcess;
  logFile: string;
  exited: boolean;
}

export interface ClusterDaemon {
  /** Sends the signal (default SIGKILL) and resolves once the process has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again; resolves once it serves. */
  start(): Promise<void>;
}

export interface Cluster {
  /** HAProxy's URL: what clients use. */
  url: string;
  /** PgBouncer's URL for the same database. */
  pgbouncerUrl: string;
  /** The pooler, to be killed and started again on the same port (the fault test). */
  pgbouncer: ClusterDaemon;
  instances: ClusterInstance[];
  dir: string;
  stop(): Promise<void>;
}

function withPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(port);
  return parsed.toString();
}

/** A value in PgBouncer's ini syntax, quoted when it has spaces or quotes. */
const iniValue = (value: string) => (/[\s']/.test(value) ? `'${value.replace(/'/g, "''")}'` : value);

function pgbouncerConfig(direct: URL, port: number, poolSize: number, statementTimeoutMs: number): string {
  const server = [
    `host=${direct.hostname}`,
    `port=${direct.port || '5432'}`,
    `user=${iniValue(decodeURIComponent(direct.username || 'postgres'))}`,
    ...(direct.password ? [`password=${iniValue(decodeURIComponent(direct.password))}`] : []),
    // The API sends no session parameters behind a pooler; the pooler sets the timeout on its connections.
    ...(statementTimeoutMs > 0 ? [`connect_query=${iniValue(`SET statement_timeout = ${statementTimeoutMs}`)}`] : []),
  ].join(' ');
  return [
    '[databases]',
    // Any database name the client asks for, on the same server.
    `* = ${server}`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    // Loopback only; PostgreSQL itself authenticates PgBouncer with the user and password above.
    'auth_type = any',
    'pool_mode = transaction',
    'max_client_conn = 2000',
    `default_pool_size = ${poolSize}`,
    'reserve_pool_size = 5',
    'ignore_startup_parameters = extra_float_digits',
    'server_reset_query =',
    // A client frozen mid-transaction must not hold its row locks and the events feed (IDLE_IN_TRANSACTION_TIMEOUT_MS).
    'idle_transaction_timeout = 60',
    'log_connections = 0',
    'log_disconnections = 0',
    'logfile =',
    'pidfile =',
    '',
  ].join('\n');
}

/**
 * deploy/haproxy.cfg, the one balancer configuration, with this cluster's listening address and instances: each
 * backend's first `server` line is the pattern of its servers. Each backend also names the instance that
 * answered (x-served-by), so the cluster test can see the spread.
 */
export function haproxyConfig(port: number, instances: Array<{ name: string; port: number }>): string {
  const lines = readFileSync(path.join(ROOT, 'deploy', 'haproxy.cfg'), 'utf8').split('\n');
  const out: string[] = [];
  let binds = 0;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    const server = /^(\s*)server\s+\S+\s+\S+(.*)$/.exec(line);
    if (server) {
      const [, indent, options] = server;
      for (const instance of instances) out.push(`${indent}server ${instance.name} 127.0.0.1:${instance.port}${options}`);
      while (index + 1 < lines.length && /^\s*server\s/.test(lines[index + 1])) index++;
      continue;
    }
    if (/^\s*bind\s/.test(line)) {
      out.push(`  bind 127.0.0.1:${port}`);
      binds++;
      continue;
    }
    out.push(line);
    if (/^\s*balance\s/.test(line)) out.push('  http-response set-header x-served-by %s');
  }
  if (binds !== 1) throw new Error(`deploy/haproxy.cfg: expected one bind line, found ${binds}`);
  return out.join('\n');
}

function pipeOutput(child: ChildProcess, name: string, options: { output: 'inherit' | 'files'; file: string }) {
  if (options.output === 'inherit') {
    const prefix = (chunk: Buffer) =>
      process.stdout.write(
        chunk
          .toString()
          .split('\n')
          .filter((line) => line.length > 0)
          .map((line) => `[${name}] ${line}\n`)
          .join(''),
      );
    child.stdout?.on('data', prefix);
    child.stderr?.on('data', prefix);
    return;
  }
  const stream = createWriteStream(options.file, { flags: 'a' });
  child.stdout?.pipe(stream);
  child.stderr?.pipe(stream);
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, failed: () => string | null, timeoutMs = 60_000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failure = failed();
    if (failure) throw new Error(`${what} failed to start:\n${failure}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

/** Starts PgBouncer, the instances (they migrate over the direct URL) and HAProxy; resolves once all answer. */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const missing = missingPrograms();
  if (missing.length > 0) throw new Error(`missing programs: ${missing.join(', ')} (apt-get install ${missing.join(' ')})`);
  const log = options.log ?? (() => undefined);
  const output = options.output ?? 'files';
  const count = options.instances ?? 3;
  const statementTimeoutMs = options.statementTimeoutMs ?? 10_000;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-cluster-'));
  // PgBouncer drops root privileges to read its configuration as another user.
  chmodSync(dir, 0o755);
  const children: ChildProcess[] = [];
  const instances: ClusterInstance[] = [];
  let stopping = false;

  const killAll = () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killAll);

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
    const terminate = async (child: ChildProcess) => {
      if (!alive(child)) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    };
    // Instances first (they finish their requests and flush usage), then the balancer and the pooler.
    const apis = instances.map((instance) => instance.child);
    await Promise.all(apis.map(terminate));
    await Promise.all(children.filter((child) => !apis.includes(child)).map(terminate));
    process.off('exit', killAll);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const direct = new URL(options.databaseUrl);
    const pgbouncerPort = await freePort();
    const pgbouncerIni = path.join(dir, 'pgbouncer.ini');
    writeFileSync(pgbouncerIni, pgbouncerConfig(direct, pgbouncerPort, options.pgbouncerPoolSize ?? 20, statementTimeoutMs));
    chmodSync(pgbouncerIni, 0o644);
    const runAsRoot = process.getuid?.() === 0;
    const pgbouncerLog = path.join(dir, 'pgbouncer.log');
    const pgbouncerUrl = withPort(options.databaseUrl, pgbouncerPort);
    let pgbouncerChild: ChildProcess | undefined;
    /** Starts PgBouncer on its port (again, after a kill) and resolves once it serves a query. */
    const startPgbouncer = async () => {
      const child = spawn(findProgram('pgbouncer')!, [...(runAsRoot ? ['-u', 'nobody'] : []), pgbouncerIni], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      pgbouncerChild = child;
      children.push(child);
      pipeOutput(child, 'pgbouncer', { output, file: pgbouncerLog });
      await waitFor(
        'PgBouncer',
        async () => {
          const client = new pg.Client({ connectionString: pgbouncerUrl });
          try {
            await client.connect();
            await client.query('select 1');
          } finally {
            await client.end().catch(() => undefined);
          }
          return true;
        },
        () => (child.exitCode !== null ? tail(pgbouncerLog) : null),
        60_000,
        10,
      );
    };
    const pgbouncer: ClusterDaemon = {
      kill: async (signal = 'SIGKILL') => {
        const child = pgbouncerChild;
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill(signal);
        await exited;
      },
      start: startPgbouncer,
    };
    await startPgbouncer();
    log(`PgBouncer (transaction pooling) on 127.0.0.1:${pgbouncerPort}`);

    const photoUrlSecret = randomBytes(32).toString('hex');
    const args =
      typeof options.server === 'object'
        ? options.server.args
        : options.server === 'dist'
          ? [...SERVER_NODE_FLAGS, path.join(ROOT, 'dist', 'server.js')]
          : [...SERVER_NODE_FLAGS, '--import', 'tsx', path.join(ROOT, 'src', 'server.ts')];
    const ports: number[] = [];
    for (let index = 0; index < count; index++) ports.push(await freePort());
    for (let index = 0; index < count; index++) {
      const name = `api${index + 1}`;
      const logFile = path.join(dir, `${name}.log`);
      const child = spawn(process.execPath, args, {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          HOST: '127.0.0.1',
          PORT: String(ports[index]),
          DATABASE_URL: pgbouncerUrl,
          DATABASE_MIGRATION_URL: options.databaseUrl,
          DATABASE_PREPARED_STATEMENTS: 'false',
          DATABASE_POOL_SIZE: String(options.instancePoolSize ?? 10),
          STATEMENT_TIMEOUT_MS: String(statementTimeoutMs),
          // HAProxy adds X-Forwarded-For; the client address is the one it saw.
          TRUST_PROXY: '127.0.0.1',
          // One upload directory and one link-signing secret for all: any instance serves any photo link.
          DATA_DIR: path.join(dir, 'data'),
          PHOTO_URL_SECRET: process.env.PHOTO_URL_SECRET || photoUrlSecret,
          // Longer than deploy/haproxy.cfg's three failed /readyz checks a second apart: out of the pool before it closes.
          SHUTDOWN_DRAIN_MS: '3500',
          ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : { REDIS_URL: '' }),
          ...options.env,
        },
      });
      children.push(child);
      const instance: ClusterInstance = { name, url: `http://127.0.0.1:${ports[index]}`, child, logFile, exited: false };
      child.once('exit', () => {
        instance.exited = true;
      });
      pipeOutput(child, name, { output, file: logFile });
      instances.push(instance);
    }
    await Promise.all(
      instances.map((instance) =>
        waitFor(
          instance.name,
          async () => (await fetch(`${instance.url}/readyz`)).ok,
          () => (instance.exited ? tail(instance.logFile) : null),
          120_000,
        ),
      ),
    );
    log(`API instances: ${instances.map((instance) => `${instance.name} ${instance.url}`).join(', ')}`);

    const port = options.port ?? (await freePort());
    const haproxyCfg = path.join(dir, 'haproxy.cfg');
    writeFileSync(haproxyCfg, haproxyConfig(port, instances.map((instance, index) => ({ name: instance.name, port: ports[index] }))));
    const check = spawnSync(findProgram('haproxy')!, ['-c', '-q', '-f', haproxyCfg], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy configuration rejected:\n${check.stdout}${check.stderr}`);
    const haproxy = spawn(findProgram('haproxy')!, ['-db', '-f', haproxyCfg], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(haproxy);
    const haproxyLog = path.join(dir, 'haproxy.log');
    pipeOutput(haproxy, 'haproxy', { output, file: haproxyLog });
    const url = `http://127.0.0.1:${port}`;
    await waitFor('HAProxy', async () => (await fetch(`${url}/readyz`)).ok, () => (haproxy.exitCode !== null ? tail(haproxyLog) : null));
    log(`HAProxy (deploy/haproxy.cfg: round robin over the ready instances, over the live ones while none is ready) on ${url}`);
    return { url, pgbouncerUrl, pgbouncer, instances, dir, stop };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

/** Builds dist/ for `server: 'dist'`; false when the build fails. */
export function buildServer(): boolean {
  const build = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8' });
  return build.status === 0 && existsSync(path.join(ROOT, 'dist', 'server.js'));
}
