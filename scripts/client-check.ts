import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Fails when clients/typescript/schema.d.ts differs from what `npm run client:generate` makes from
 * openapi/openapi.json: regenerates with the same CLI and options into a temporary file and compares.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const committedPath = join(root, 'clients/typescript/schema.d.ts');
const cli = join(dirname(createRequire(import.meta.url).resolve('openapi-typescript/package.json')), 'bin/cli.js');

const dir = mkdtempSync(join(tmpdir(), 'client-check-'));
try {
  const fresh = join(dir, 'schema.d.ts');
  // Same working directory as the npm script, so the CLI finds the same redocly.yaml.
  execFileSync(process.execPath, [cli, 'openapi/openapi.json', '-o', fresh], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let committed = '';
  try {
    committed = readFileSync(committedPath, 'utf8');
  } catch {
    // missing counts as drift
  }
  if (committed !== readFileSync(fresh, 'utf8')) {
    process.stderr.write('clients/typescript/schema.d.ts is out of date: run `npm run client:generate` and commit the result.\n');
    process.exit(1);
  }
  process.stdout.write('clients/typescript/schema.d.ts is up to date.\n');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
