import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../../src/db/client.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { withDatabase } from './database-url.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Server URL (any database) and the migrated template database to clone per test file; empty for PGlite. */
    databaseServerUrl: string;
    templateDatabase: string;
  }
}

async function startContainer(): Promise<{ url: string; stop: () => Promise<unknown> } | null> {
  try {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:15-alpine').start();
    return { url: container.getConnectionUri(), stop: () => container.stop() };
  } catch {
    return null;
  }
}

/**
 * Test databases: DATABASE_URL when given (CI, this machine), else a testcontainers PostgreSQL where
 * Docker answers, else PGlite. With PostgreSQL the schema is migrated once into a template database that
 * every test file clones.
 */
export default async function setup(project: TestProject) {
  let serverUrl = process.env.DATABASE_URL ?? '';
  let stopContainer: (() => Promise<unknown>) | undefined;
  if (!serverUrl && process.env.TEST_USE_PGLITE !== '1') {
    const container = await startContainer();
    if (container) {
      serverUrl = container.url;
      stopContainer = container.stop;
    }
  }
  if (!serverUrl) {
    project.provide('databaseServerUrl', '');
    project.provide('templateDatabase', '');
    return;
  }

  const runId = randomBytes(4).toString('hex');
  const template = `crm_test_tpl_${runId}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${template}`);
  const database = await createDatabase({
    DATABASE_URL: withDatabase(serverUrl, template),
    DATA_DIR: './data',
    DATABASE_POOL_SIZE: 2,
    STATEMENT_TIMEOUT_MS: 0,
  });
  await migrateDatabase(database);
  await database.close();
  project.provide('databaseServerUrl', serverUrl);
  project.provide('templateDatabase', template);

  return async () => {
    const { rows } = await admin.query<{ datname: string }>(
      `select datname from pg_database where datname like $1`,
      [`crm_test_%${runId}%`],
    );
    for (const { datname } of rows) {
      await admin.query(`drop database if exists ${datname} with (force)`).catch(() => undefined);
    }
    await admin.end();
    await stopContainer?.();
  };
}
