import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The embedded database is one process: a second one opening DATA_DIR would write beside it and lose data. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The embedded database in ${dataDir} is in use by process ${pid} (a running server?). ` +
        'Stop that process first, or set DATABASE_URL to use PostgreSQL, which many processes can share.',
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  release(): void;
}

const held = new Set<string>();

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function lockHolder(file: string): number | null {
  try {
    const pid = Number(JSON.parse(readFileSync(file, 'utf8')).pid);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Takes DATA_DIR/pglite.lock for this process (server or admin CLI), or throws DataDirLockedError while a
 * live process holds it. A lock whose process is gone (killed, crashed, or a previous container whose pid
 * is now this process's own) is stale and taken over; it is removed on release and on exit.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const root = path.resolve(dataDir);
  const file = path.join(root, 'pglite.lock');
  mkdirSync(root, { recursive: true });
  if (held.has(file)) throw new DataDirLockedError(root, process.pid);
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() }), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error;
      const pid = lockHolder(file);
      if (pid !== null && pid !== process.pid && processAlive(pid)) throw new DataDirLockedError(root, pid);
      // Stale: its process is gone.
      try {
        unlinkSync(file);
      } catch {
        // another process removed it first; try again
      }
    }
  }
  held.add(file);
  const release = () => {
    if (!held.delete(file)) return;
    process.off('exit', release);
    if (lockHolder(file) === process.pid) {
      try {
        unlinkSync(file);
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', release);
  return { release };
}
