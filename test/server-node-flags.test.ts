import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVER_NODE_FLAGS } from '../scripts/server-node-flags.js';

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

/** The Node flags are written out where a shell or Docker reads them; they must be those of the one list. */
describe('every start of the server passes the same Node flags', () => {
  it("the Dockerfile's CMD", () => {
    const cmd = /^CMD (\[.*\])\s*$/m.exec(read('Dockerfile'))?.[1];
    expect(JSON.parse(cmd ?? 'null')).toEqual(['node', ...SERVER_NODE_FLAGS, 'dist/server.js']);
  });

  it('npm start', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start;
    expect(start).toBe(['node', ...SERVER_NODE_FLAGS, 'bin/run.mjs', 'server'].join(' '));
  });
});
