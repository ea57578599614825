#!/usr/bin/env node
/**
 * Runs an entry point of the server by name (`server`, `cli/admin`): src/<name>.ts through tsx in a
 * checkout with dev dependencies, else the compiled dist/<name>.js (the Docker image, which has no src/
 * and no tsx). `npm start` and `npm run admin` so work the same in both.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const name = process.argv[2];
if (!name || !/^[\w/-]+$/.test(name)) {
  process.stderr.write('usage: node bin/run.mjs <entry> [args...]\n');
  process.exit(2);
}
// The entry point sees its own arguments only, as if it had been started directly.
process.argv.splice(2, 1);

const source = new URL(`../src/${name}.ts`, import.meta.url);
const compiled = new URL(`../dist/${name}.js`, import.meta.url);

function hasTsx() {
  try {
    createRequire(import.meta.url).resolve('tsx/esm/api');
    return true;
  } catch {
    return false;
  }
}

if (existsSync(source) && hasTsx()) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  process.stderr.write(`Neither src/${name}.ts with tsx nor dist/${name}.js is present: run \`npm run build\` first.\n`);
  process.exit(1);
}
