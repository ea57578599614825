import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/client.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeCustomer } from './helpers/factories.js';
import { listening, runsWith } from './helpers/system.js';

const ctx = await buildTestApp();
const postgres = ctx.databaseUrl !== undefined;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const me = '/api/v1/companies/me';

/** The names of the statements prepared on the only connection of a one-connection pool. */
async function preparedOnTheConnection(preparedStatements: boolean) {
  const database = await createDatabase({
    DATABASE_URL: ctx.databaseUrl,
    DATA_DIR: 'memory://',
    DATABASE_POOL_SIZE: 1,
    STATEMENT_TIMEOUT_MS: 10_000,
    DATABASE_PREPARED_STATEMENTS: preparedStatements,
  });
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '0',
    DATABASE_URL: ctx.databaseUrl,
    DATABASE_PREPARED_STATEMENTS: String(preparedStatements),
  });
  const app = await buildApp({ config, database });
  try {
    const company = await makeCompany(database);
    const created = await makeCustomer(app, company.key);
    // A job create runs in a transaction (the customer's create is one statement).
    const job = await call(app, 'POST', '/api/v1/jobs', { key: company.key, body: { customer_uuid: created.uuid, title: 'Prepared' } });
    expect(job.status).toBe(200);
    const list = await call(app, 'GET', '/api/v1/customers', { key: company.key });
    expect(list.status).toBe(200);
    expect(list.body.data.customers.map((row: { uuid: string }) => row.uuid)).toContain(created.uuid);
    const one = await call(app, 'GET', `/api/v1/customers/${created.uuid}`, { key: company.key });
    expect(one.status).toBe(200);
    const { rows } = await database.pool!.query<{ name: string }>('select name from pg_prepared_statements');
    const timeout = await database.pool!.query<{ statement_timeout: string }>('show statement_timeout');
    return { names: rows.map((row) => row.name), statementTimeout: timeout.rows[0].statement_timeout };
  } finally {
    await app.close();
    await database.close();
  }
}

describe.runIf(postgres)('DATABASE_PREPARED_STATEMENTS', () => {
  it('defaults to true', () => {
    expect(loadConfig({}).DATABASE_PREPARED_STATEMENTS).toBe(true);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'false' }).DATABASE_PREPARED_STATEMENTS).toBe(false);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'sometimes' })).toThrow(/DATABASE_PREPARED_STATEMENTS/);
  });

  it('on: hot statements are prepared under a name, inside transactions too, and statement_timeout is set at connect', async () => {
    const { names, statementTimeout } = await preparedOnTheConnection(true);
    expect(names).toEqual(expect.arrayContaining(['api_json_page_customers_live_desc_created_at', 'api_json_customers_live']));
    // The customer's create is one statement, prepared under a name; the job create's transaction ran on the
    // same connection: its insert and its event were prepared there.
    expect(names).toEqual(expect.arrayContaining(['create_customers', 'insert_events_1']));
    expect(names.some((name) => /^insert_[0-9a-f]{16}$/.test(name))).toBe(true);
    expect(statementTimeout).toBe('10s');
  });

  it('off: no statement is prepared under a name, in or out of a transaction, and no session parameter is sent at connect', async () => {
    const { names, statementTimeout } = await preparedOnTheConnection(false);
    expect(names).toEqual([]);
    // A transaction pooler refuses the startup parameter; the pooler sets the timeout instead.
    expect(statementTimeout).toBe('0');
  });
});

describe.runIf(postgres)('DATABASE_MIGRATION_URL', () => {
  it('migrations connect to DATABASE_MIGRATION_URL, not DATABASE_URL', async () => {
    const unreachable = new URL(ctx.databaseUrl!);
    unreachable.port = '1';
    const throughOther = await createDatabase({
      DATABASE_URL: ctx.databaseUrl,
      DATABASE_MIGRATION_URL: unreachable.toString(),
      DATA_DIR: 'memory://',
      DATABASE_POOL_SIZE: 1,
      STATEMENT_TIMEOUT_MS: 0,
    });
    try {
      await expect(migrateDatabase(throughOther)).rejects.toThrow(/ECONNREFUSED/);
      await throughOther.ping();
    } finally {
      await throughOther.close();
    }
  });

  it('defaults to DATABASE_URL', async () => {
    const database = await createDatabase({ DATABASE_URL: ctx.databaseUrl, DATA_DIR: 'memory://', DATABASE_POOL_SIZE: 1, STATEMENT_TIMEOUT_MS: 0 });
    try {
      expect(database.migrationUrl).toBe(ctx.databaseUrl);
      await migrateDatabase(database);
      const client = new pg.Client({ connectionString: ctx.databaseUrl });
      await client.connect();
      const { rows } = await client.query('select count(*)::int as n from drizzle.__drizzle_migrations');
      await client.end();
      expect(rows[0].n).toBeGreaterThan(0);
    } finally {
      await database.close();
    }
  });
});

/** Every TypeScript file under a directory. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('no session state behind a transaction pooler', () => {
  // A transaction pooler gives each transaction any server connection: whatever a session keeps is lost or,
  // worse, leaks to another client. Only the migrations (a direct connection of their own) may hold a lock.
  const forbidden: Array<[string, RegExp]> = [
    ['session advisory lock', /pg_(try_)?advisory_lock(_shared)?\s*\(/i],
    ['LISTEN', /\bLISTEN\s+[\w"]/],
    ['temporary table', /\bcreate\s+(temp|temporary)\s+table/i],
    ['session SET', /sql`\s*set\s+(?!local\b)(?!transaction\b)/i],
    ['named prepared statement outside tenant-table', /\.prepare\(\s*['"`]/],
  ];
  const files = sourceFiles(path.resolve(import.meta.dirname, '../src')).filter((file) => !file.endsWith(path.join('db', 'migrate.ts')));

  it.each(forbidden)('src never uses a %s', (_what, pattern) => {
    const offenders = files.filter((file) => pattern.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('the patterns catch what they are meant to', () => {
    const samples = ["select pg_advisory_lock(1)", 'LISTEN events', 'CREATE TEMP TABLE t (a int)', 'sql`set statement_timeout = 0`', "q.prepare('find')"];
    forbidden.forEach(([, pattern], index) => expect(pattern.test(samples[index])).toBe(true));
    expect(forbidden[0][1].test('select pg_advisory_xact_lock(1)')).toBe(false);
    expect(forbidden[3][1].test('sql`set local statement_timeout = 0`')).toBe(false);
  });
});

/** A second instance of the API over the same database, with its own rate-limit store connection. */
async function instance(env: Record<string, string>, lines?: string[]) {
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'warn', DATABASE_URL: ctx.databaseUrl ?? '', ...env });
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines?.push(String(chunk));
      done();
    },
  });
  return buildApp({ config, database: ctx.database, logger: { level: 'warn', stream } });
}

const redisHere = runsWith('Redis (REDIS_URL)', await listening(REDIS_URL), 'apt-get install redis-server');

describe('rate limit shared through Redis (REDIS_URL)', () => {
  it.runIf(redisHere)('counts one key across instances: the limit holds over all of them, not per instance', async () => {
    const apps = [
      await instance({ RATE_LIMIT_PER_MINUTE: '5', REDIS_URL }),
      await instance({ RATE_LIMIT_PER_MINUTE: '5', REDIS_URL }),
      await instance({ RATE_LIMIT_PER_MINUTE: '5', REDIS_URL }),
    ];
    try {
      const company = await makeCompany(ctx.database);
      const statuses: number[] = [];
      const remaining: string[] = [];
      for (let i = 0; i < 8; i++) {
        const response = await call(apps[i % 3], 'GET', me, { key: company.key });
        statuses.push(response.status);
        remaining.push(String(response.headers['x-ratelimit-remaining']));
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
      expect(remaining.slice(0, 5)).toEqual(['4', '3', '2', '1', '0']);
      // Another key of another company is counted on its own.
      const other = await makeCompany(ctx.database);
      expect((await call(apps[1], 'GET', me, { key: other.key })).status).toBe(200);
    } finally {
      for (const app of apps) await app.close();
    }
  });

  it('without REDIS_URL each instance counts on its own', async () => {
    const apps = [await instance({ RATE_LIMIT_PER_MINUTE: '2' }), await instance({ RATE_LIMIT_PER_MINUTE: '2' })];
    try {
      const company = await makeCompany(ctx.database);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await call(apps[i % 2], 'GET', me, { key: company.key })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
    } finally {
      for (const app of apps) await app.close();
    }
  });

  it('stays up when Redis is unreachable: logs a warning and counts per instance meanwhile', async () => {
    const lines: string[] = [];
    const app = await instance({ RATE_LIMIT_PER_MINUTE: '3', REDIS_URL: 'redis://127.0.0.1:1' }, lines);
    try {
      const company = await makeCompany(ctx.database);
      for (const remaining of ['2', '1', '0']) {
        const response = await call(app, 'GET', me, { key: company.key });
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(response.body.data.uuid).toBe(company.companyId);
        expect(response.headers['x-ratelimit-remaining']).toBe(remaining);
      }
      expect((await call(app, 'GET', me, { key: company.key })).status).toBe(429);
      expect((await call(app, 'GET', '/readyz')).status).toBe(200);
      const warning = lines.map((line) => JSON.parse(line)).find((entry) => /Redis for rate limits unreachable/.test(entry.msg));
      expect(warning).toMatchObject({ level: 40 });
    } finally {
      await app.close();
    }
  });
});
