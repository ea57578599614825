/**
 * `npm run cluster [-- --instances N] [--port P] [--built]`: N API instances (default 3) behind HAProxy,
 * PgBouncer in transaction mode in front of PostgreSQL (DATABASE_URL, a direct connection), the rate limit
 * shared through Redis when REDIS_URL is set. Prints the balancer's URL; Ctrl-C stops everything.
 */
import { parseArgs } from 'node:util';
import { buildServer, missingPrograms, startCluster, type Cluster } from './local-cluster.js';

const { values } = parseArgs({
  options: {
    instances: { type: 'string', default: process.env.CLUSTER_INSTANCES ?? '3' },
    port: { type: 'string', default: process.env.CLUSTER_PORT ?? '8080' },
    built: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

const say = (line: string) => process.stdout.write(`${line}\n`);

async function main() {
  if (values.help) {
    say('Usage: npm run cluster [-- --instances N] [--port P] [--built]');
    say('  DATABASE_URL  direct PostgreSQL URL (default postgres://postgres@127.0.0.1:5432/postgres)');
    say('  REDIS_URL     shared rate-limit counters (without it each instance counts on its own)');
    return;
  }
  const instances = Number(values.instances);
  const port = Number(values.port);
  if (!Number.isInteger(instances) || instances < 1 || instances > 32) throw new Error('--instances must be 1 to 32');
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error('--port must be a TCP port');
  const missing = missingPrograms();
  if (missing.length > 0) {
    throw new Error(`${missing.join(' and ')} not found; install with: sudo apt-get install ${missing.join(' ')}`);
  }
  const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL || undefined;
  if (!redisUrl) say('REDIS_URL is not set: each instance applies the rate limit on its own.');
  let server: 'tsx' | 'dist' = 'tsx';
  if (values.built) {
    say('Building dist/ ...');
    if (!buildServer()) throw new Error('the build failed (npm run build)');
    server = 'dist';
  }

  let cluster: Cluster | undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    say(`\n${signal}: stopping the cluster ...`);
    await cluster?.stop();
    say('Stopped.');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  const statementTimeoutMs = Number(process.env.STATEMENT_TIMEOUT_MS || 10_000);
  if (!Number.isInteger(statementTimeoutMs) || statementTimeoutMs < 0) throw new Error('STATEMENT_TIMEOUT_MS must be an integer >= 0');
  cluster = await startCluster({ databaseUrl, instances, port, server, redisUrl, statementTimeoutMs, output: 'inherit', log: say });
  if (stopping) return;
  for (const instance of cluster.instances) {
    instance.child.once('exit', (code, signal) => {
      if (!stopping) say(`${instance.name} exited (${signal ?? code}); HAProxy routes around it.`);
    });
  }
  say('');
  say(`Cluster ready: ${instances} instance(s), HAProxy, PgBouncer (transaction mode)${redisUrl ? ', Redis rate limits' : ''}.`);
  say(`Balancer URL: ${cluster.url}`);
  say('Press Ctrl-C to stop.');
}

main().catch((error: unknown) => {
  process.stderr.write(`cluster: ${(error as Error)?.message ?? String(error)}\n`);
  process.exit(1);
});
