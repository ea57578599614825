import { mkdirSync } from 'node:fs';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Config } from '../config.js';
import { lockDataDir } from './data-dir-lock.js';
import { emitDatabaseNotice } from './notices.js';
import { GuardedClient, ReleasedInTransactionError, SafePool } from './pg-guards.js';
import * as schema from './schema/index.js';

export type Schema = typeof schema;
/** The database handle: node-postgres or PGlite behind one Drizzle type. A transaction is one too. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export interface Database {
  db: Db;
  driver: 'postgres' | 'pglite';
  /** The node-postgres pool, when driver is postgres. */
  pool?: pg.Pool;
  /** A direct connection string for migrations (DATABASE_MIGRATION_URL, else DATABASE_URL). */
  migrationUrl?: string;
  /** Runs `select 1`; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// Dates and numerics stay strings: money is parsed into integer cents by the services, never floats.
pg.types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);

/** How much longer than the statement timeout the client waits for any answer before it gives up. */
const QUERY_TIMEOUT_GRACE_MS = 2_000;
/** /readyz answers within this bound even when the database is silent. */
const PING_TIMEOUT_MS = 3_000;

/**
 * What a database and every transaction on it share (Drizzle's SQL dialect object, one per database):
 * the key of what is kept per database, such as its prepared statements.
 */
export function databaseOf(db: Db): object {
  return (db._.session as unknown as { dialect: object }).dialect;
}

/** Databases that must not use named prepared statements (DATABASE_PREPARED_STATEMENTS=false). */
const unnamedOnly = new WeakSet<object>();

/**
 * Whether statements on this handle (a database or a transaction on it) may be prepared under a name. A
 * transaction pooler hands each transaction any server connection, where a statement prepared on another
 * one does not exist.
 */
export function namedStatementsAllowed(db: Db): boolean {
  return !unnamedOnly.has(databaseOf(db));
}

/** Databases of one connection (the embedded PGlite): while a transaction is open, every other statement waits. */
const oneConnection = new WeakSet<object>();

/** Whether a transaction on this handle holds the whole database until it ends (the embedded PGlite). */
export function runsOneTransactionAtATime(db: Db): boolean {
  return oneConnection.has(databaseOf(db));
}

export async function createDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DATABASE_POOL_SIZE' | 'STATEMENT_TIMEOUT_MS'> &
    Partial<Pick<Config, 'DATABASE_PREPARED_STATEMENTS' | 'DATABASE_MIGRATION_URL' | 'IDLE_IN_TRANSACTION_TIMEOUT_MS'>>,
  logger?: { error(obj: unknown, msg?: string): void },
): Promise<Database> {
  if (config.DATABASE_URL) {
    const { drizzle } = await import('drizzle-orm/node-postgres');
    const direct = config.DATABASE_PREPARED_STATEMENTS ?? true;
    const pool = new SafePool({
      Client: GuardedClient,
      connectionString: config.DATABASE_URL,
      max: config.DATABASE_POOL_SIZE,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      // A startup parameter PgBouncer refuses ("unsupported startup parameter"): behind a transaction
      // pooler the pooler sets it on its server connections instead (PgBouncer connect_query, README).
      statement_timeout: (direct && config.STATEMENT_TIMEOUT_MS) || undefined,
      // Likewise (PgBouncer's idle_transaction_timeout there): a transaction idle that long is ended by the server.
      idle_in_transaction_session_timeout: (direct && config.IDLE_IN_TRANSACTION_TIMEOUT_MS) || undefined,
      // The server cancels a slow statement (57014); this client-side bound is for a connection that went
      // silent (network partition), where no answer, not even the cancellation, ever arrives.
      query_timeout: config.STATEMENT_TIMEOUT_MS ? config.STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_GRACE_MS : undefined,
      keepAlive: true,
      application_name: 'field-service-crm-api',
    });
    // An idle client losing its connection (database restart) must not crash the process.
    pool.on('error', (error) => logger?.error({ err: error }, 'idle database connection failed'));
    // A leak in the code, never expected: the client was closed instead of pooled (pg-guards.ts).
    pool.on('release', (error: unknown) => {
      if (error instanceof ReleasedInTransactionError) logger?.error({ err: error }, 'database client released inside a transaction');
    });
    // A checked-out client (a transaction) whose connection breaks emits 'error' with no pool listener,
    // which would crash the process; its queries fail anyway, so the event is only logged.
    pool.on('connect', (client) => {
      client.on('error', (error) => logger?.error({ err: error }, 'database connection failed'));
      client.on('notice', emitDatabaseNotice);
    });
    const db = drizzle({ client: pool, schema }) as unknown as Db;
    if (!direct) unnamedOnly.add(databaseOf(db));
    let closing: Promise<void> | undefined;
    return {
      db,
      driver: 'postgres',
      pool,
      migrationUrl: config.DATABASE_MIGRATION_URL ?? config.DATABASE_URL,
      async ping() {
        await pool.query({ text: 'select 1', query_timeout: PING_TIMEOUT_MS } as pg.QueryConfig);
      },
      // Closing twice is harmless: the app closes what it owns and a caller may close again.
      close() {
        closing ??= pool.end();
        return closing;
      },
    };
  }

  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const { btree_gin } = await import('@electric-sql/pglite/contrib/btree_gin');
  const { btree_gist } = await import('@electric-sql/pglite/contrib/btree_gist');
  const { drizzle } = await import('drizzle-orm/pglite');
  const inMemory = config.DATA_DIR === 'memory://';
  const dataDir = inMemory ? 'memory://' : `${config.DATA_DIR.replace(/\/$/, '')}/pglite`;
  // PGlite is one process: the server and the admin CLI both take the DATA_DIR lock, so neither writes
  // beside the other and loses its writes.
  const lock = inMemory ? undefined : lockDataDir(config.DATA_DIR);
  let client;
  try {
    if (!inMemory) mkdirSync(dataDir, { recursive: true });
    client = await PGlite.create(dataDir, { extensions: { pg_trgm, btree_gin, btree_gist } });
  } catch (error) {
    lock?.release();
    throw error;
  }
  const db = drizzle({ client, schema }) as unknown as Db;
  oneConnection.add(databaseOf(db));
  let closing: Promise<void> | undefined;
  return {
    db,
    driver: 'pglite',
    async ping() {
      await db.execute(sql`select 1`);
    },
    close() {
      closing ??= client.close().finally(() => lock?.release());
      return closing;
    },
  };
}
