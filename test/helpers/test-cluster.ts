import { inject } from 'vitest';
import { missingPrograms, startCluster, type Cluster } from '../../scripts/local-cluster.js';
import type { Database } from '../../src/db/client.js';
import { createTestDatabase } from './app.js';
import { runsWith } from './system.js';

/** Whether this machine can run the cluster: PostgreSQL, haproxy and pgbouncer. CI must, so it always tries. */
export const clusterRunnable =
  runsWith('HAProxy and PgBouncer', missingPrograms().length === 0, `apt-get install ${missingPrograms().join(' ')}`) &&
  runsWith('a PostgreSQL server (DATABASE_URL)', inject('databaseServerUrl') !== '', 'set DATABASE_URL');

export interface TestCluster {
  cluster: Cluster;
  /** A direct connection to the cluster's database, for setup and for checking what was stored. */
  database: Database;
  stop(): Promise<void>;
}

/**
 * scripts/local-cluster.ts on a fresh test database: three instances behind HAProxy, PgBouncer in transaction
 * mode, rate limits in Redis (REDIS_URL).
 */
export async function startTestCluster(env: Record<string, string>): Promise<TestCluster> {
  if (inject('databaseServerUrl') === '') throw new Error('the cluster needs PostgreSQL (DATABASE_URL)');
  const created = await createTestDatabase();
  const release = async () => {
    await created.database.close();
    await created.drop();
  };
  try {
    const cluster = await startCluster({
      databaseUrl: created.url!,
      instances: 3,
      redisUrl: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
      instancePoolSize: 8,
      env: { NODE_ENV: 'production', ...env },
    });
    return {
      cluster,
      database: created.database,
      stop: async () => {
        await cluster.stop();
        await release();
      },
    };
  } catch (error) {
    await release();
    throw error;
  }
}
