import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/client.js';

/** Writes openapi/openapi.json from the route schemas; with --check, fails when the committed copy differs. */
const target = fileURLToPath(new URL('../openapi/openapi.json', import.meta.url));

const config = loadConfig({ NODE_ENV: 'production', LOG_LEVEL: 'silent', DATA_DIR: 'memory://' });
const database = await createDatabase(config);
const app = await buildApp({ config, database });
await app.ready();
const document = `${JSON.stringify(app.swagger(), null, 2)}\n`;
await app.close();
await database.close();

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // missing counts as drift
  }
  if (committed !== document) {
    process.stderr.write('openapi/openapi.json is out of date: run `npm run openapi` and commit the result.\n');
    process.exit(1);
  }
  process.stdout.write('openapi/openapi.json is up to date.\n');
} else {
  writeFileSync(target, document);
  process.stdout.write(`Wrote ${target}\n`);
}
