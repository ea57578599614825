import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnServer } from './helpers/server-process.js';

/**
 * The embedded database (PGlite) is one process: the server and the admin CLI lock DATA_DIR, so the CLI
 * run while the server holds the directory refuses with a clear message instead of losing its writes.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

function admin(dataDir: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('DATA_DIR lock of the embedded database', () => {
  it('refuses the CLI while the server runs on the directory, and lets it run once the server stopped', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'crm-lock-'));
    const server = await spawnServer({ DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, { readyTimeoutMs: 90_000 });
    try {
      expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(true);
      const refused = await admin(dataDir, ['create-company', '--name', 'Locked Out', '--email', 'lock@example.com']);
      expect(refused.code).not.toBe(0);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(`in use by process ${server.child.pid}`);
      expect(refused.stderr).toMatch(/Stop that process first, or set DATABASE_URL/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
    const created = await admin(dataDir, ['create-company', '--name', 'After', '--email', 'after@example.com']);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout).company_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
  }, 120_000);

  it('refuses to start a second server on a directory in use', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'crm-lock-'));
    const first = await spawnServer({ DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, { readyTimeoutMs: 90_000 });
    try {
      await expect(spawnServer({ DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, { readyTimeoutMs: 90_000 })).rejects.toThrow(/in use by process/);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  }, 120_000);

  it('takes over a stale lock left by a process that no longer exists', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'crm-lock-'));
    const pid = await deadPid();
    writeFileSync(path.join(dataDir, 'pglite.lock'), JSON.stringify({ pid, started_at: new Date().toISOString() }));
    const created = await admin(dataDir, ['create-company', '--name', 'Stale', '--email', 'stale@example.com']);
    expect(created.code, created.stderr).toBe(0);
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
    // A lock file that is not even JSON is stale too.
    writeFileSync(path.join(dataDir, 'pglite.lock'), 'garbage');
    const again = await admin(dataDir, ['create-company', '--name', 'Stale 2', '--email', 'stale2@example.com']);
    expect(again.code, again.stderr).toBe(0);
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);
  }, 120_000);
});
