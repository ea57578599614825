import { mkdirSync } from 'node:fs';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Config } from '../config.js';
import * as schema from './schema/index.js';

export type Schema = typeof schema;
/** The database handle: node-postgres or PGlite behind one Drizzle type. A transaction is one too. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

export interface Database {
  db: Db;
  driver: 'postgres' | 'pglite';
  /** The node-postgres pool, when driver is postgres. */
  pool?: pg.Pool;
  /** Runs `select 1`; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// Dates and numerics stay strings: money is parsed into integer cents by the services, never floats.
pg.types.setTypeParser(pg.types.builtins.DATE, (value: string) => value);

export async function createDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR' | 'DATABASE_POOL_SIZE' | 'STATEMENT_TIMEOUT_MS'>,
  logger?: { error(obj: unknown, msg?: string): void },
): Promise<Database> {
  if (config.DATABASE_URL) {
    const { drizzle } = await import('drizzle-orm/node-postgres');
    const pool = new pg.Pool({
      connectionString: config.DATABASE_URL,
      max: config.DATABASE_POOL_SIZE,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      statement_timeout: config.STATEMENT_TIMEOUT_MS || undefined,
      application_name: 'field-service-crm-api',
    });
    // An idle client losing its connection (database restart) must not crash the process.
    pool.on('error', (error) => logger?.error({ err: error }, 'idle database connection failed'));
    const db = drizzle({ client: pool, schema }) as unknown as Db;
    return {
      db,
      driver: 'postgres',
      pool,
      async ping() {
        await pool.query('select 1');
      },
      async close() {
        await pool.end();
      },
    };
  }

  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const { btree_gin } = await import('@electric-sql/pglite/contrib/btree_gin');
  const { drizzle } = await import('drizzle-orm/pglite');
  const dataDir = config.DATA_DIR === 'memory://' ? 'memory://' : `${config.DATA_DIR.replace(/\/$/, '')}/pglite`;
  if (dataDir !== 'memory://') mkdirSync(dataDir, { recursive: true });
  const client = await PGlite.create(dataDir, { extensions: { pg_trgm, btree_gin } });
  const db = drizzle({ client, schema }) as unknown as Db;
  return {
    db,
    driver: 'pglite',
    async ping() {
      await db.execute(sql`select 1`);
    },
    async close() {
      await client.close();
    },
  };
}
