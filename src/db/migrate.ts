import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Database } from './client.js';

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../migrations', import.meta.url));

// Any constant works; it only keeps two instances starting together from migrating at once.
const MIGRATION_LOCK_ID = 7_201_914;

/** Applies the committed SQL migrations; the same files serve PostgreSQL and PGlite. */
export async function migrateDatabase(database: Database): Promise<void> {
  if (database.driver === 'pglite' || !database.pool) {
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    await migrate(database.db as never, { migrationsFolder: MIGRATIONS_FOLDER });
    return;
  }
  const { drizzle } = await import('drizzle-orm/node-postgres');
  const { migrate } = await import('drizzle-orm/node-postgres/migrator');
  // A direct connection of its own (never through a transaction pooler: the advisory lock below is held
  // by the session), without the request timeouts of the pool: index builds on large tables may take minutes.
  const connectionString = database.migrationUrl ?? database.pool.options.connectionString;
  const client = new pg.Client({ connectionString, application_name: 'migrations' });
  await client.connect();
  try {
    await client.query('set statement_timeout = 0');
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    try {
      await migrate(drizzle({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]);
    }
  } finally {
    await client.end();
  }
}
