import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/** `npm start` on an empty DATA_DIR: the server says what it does while the embedded database is made. */
const dataDir = mkdtempSync(join(tmpdir(), 'crm-first-start-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('the first embedded start', { timeout: 180_000 }, () => {
  it('prints what it is doing before it migrates, then the demo key', async () => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' };
    const child = spawn(process.execPath, ['bin/run.mjs', 'server'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const lines: Array<{ at: number; text: string }> = [];
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
      lines.push({ at: Date.now(), text: String(chunk) });
    });
    const exited = once(child, 'exit');
    const started = Date.now();
    try {
      await expect.poll(() => stdout, { timeout: 170_000, interval: 200 }).toMatch(/API key \(shown once\)/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    const migrations = readdirSync(new URL('../migrations', import.meta.url)).filter((name) => name.endsWith('.sql')).length;
    expect(stdout).toMatch(/First start: creating the embedded PostgreSQL database \(PGlite\) under /);
    expect(stdout).toContain(`Applying ${migrations} database migrations ...`);
    expect(stdout).toMatch(/Embedded database ready in \d+\.\d s\./);
    // The first line comes at once, not after the migrations.
    expect(lines[0].text).toMatch(/^First start/);
    expect(lines[0].at - started).toBeLessThan(10_000);
    expect(stdout.indexOf('Applying')).toBeLessThan(stdout.indexOf('ready in'));
    expect(stdout.indexOf('ready in')).toBeLessThan(stdout.indexOf('API key'));
  });
});
