import { existsSync, readdirSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { loadConfig } from './config.js';
import { createDatabase } from './db/client.js';
import { MIGRATIONS_FOLDER, migrateDatabase } from './db/migrate.js';
import { createCompany, hasAnyCompany } from './modules/admin/provisioning.service.js';
import { createStorage } from './storage/create-storage.js';
import { sharedLinkSecret } from './storage/link-secret.js';

function migrationCount(): number {
  return readdirSync(MIGRATIONS_FOLDER).filter((name) => name.endsWith('.sql')).length;
}

/**
 * Under load V8 lets the heap grow to several times what is live between full collections (a feed page
 * or a photo is short-lived garbage that fills the old space), which took the process past 300 MiB. A
 * growth of 50 % per collection keeps it under 200 MiB for a few percent of throughput (bench/README.md).
 * A --heap-growing-percent given in NODE_OPTIONS or on the command line wins.
 */
function boundHeapGrowth() {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  if (!given.some((flag) => flag.startsWith('--heap-growing-percent'))) setFlagsFromString('--heap-growing-percent=50');
}

async function start() {
  boundHeapGrowth();
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
  // The first start on an empty embedded database takes a while (PGlite creates its cluster, then every
  // migration runs): say so instead of staying silent.
  const embedded = !config.DATABASE_URL && config.DATA_DIR !== 'memory://';
  const firstStart = embedded && !existsSync(`${config.DATA_DIR.replace(/\/$/, '')}/pglite`);
  const started = Date.now();
  const say = (line: string) => {
    if (firstStart) process.stdout.write(`${line}\n`);
  };
  say(`First start: creating the embedded PostgreSQL database (PGlite) under ${config.DATA_DIR} ...`);
  const database = await createDatabase(config);
  if (config.MIGRATE_ON_START) {
    say(`Applying ${migrationCount()} database migrations ...`);
    await migrateDatabase(database);
  }
  say(`Embedded database ready in ${((Date.now() - started) / 1000).toFixed(1)} s.`);

  let demoKey: string | undefined;
  // An empty embedded database gets a demo company so `npm start` is usable at once.
  if (database.driver === 'pglite' && !(await hasAnyCompany(database.db))) {
    const demo = await createCompany(database.db, { name: 'Demo Field Services', email: 'demo@example.com' });
    demoKey = demo.api_key;
  }

  // Without PHOTO_URL_SECRET, links are signed with a secret the database keeps, the same for every instance
  // and after a restart (a database without migration 0022 leaves the per-process one and its warning).
  const storedSecret = config.PHOTO_URL_SECRET ? undefined : await sharedLinkSecret(database.db).catch(() => undefined);
  const appConfig = storedSecret ? { ...config, PHOTO_URL_SECRET: storedSecret } : config;
  const storage = await createStorage(appConfig);
  // The app owns the database: app.close() stops background work with its last writes, then closes it.
  const app = await buildApp({ config: appConfig, database, storage, ownsDatabase: true });
  if (storedSecret) app.log.info('PHOTO_URL_SECRET is not set: photo and share links are signed with the secret kept in the database');

  closeWithGrace({ delay: 10_000 + config.SHUTDOWN_DRAIN_MS }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    app.lifecycle.beginShutdown();
    // Behind a balancer: keep serving while /readyz says 503, until the balancer has taken this instance out;
    // closing the listener first would cut a request sent on a kept-alive connection at that moment.
    if (!err && config.SHUTDOWN_DRAIN_MS > 0) await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DRAIN_MS));
    await app.close();
  });

  await app.listen({ host: config.HOST, port: config.PORT });
  if (demoKey) {
    process.stdout.write(
      `\nDemo company created on the embedded database. API key (shown once):\n  ${demoKey}\n` +
        `Try: curl -H "Authorization: Bearer ${demoKey}" http://${config.HOST}:${config.PORT}/api/v1/companies/me\n\n`,
    );
  }
}

start().catch((error: unknown) => {
  process.stderr.write(`Failed to start: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
