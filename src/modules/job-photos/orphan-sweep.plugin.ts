import fp from 'fastify-plugin';
import type { Db } from '../../db/client.js';
import { removeOrphanFiles } from './job-photos.service.js';
import type { Storage } from '../../storage/storage.js';

/** The sweep runs this long after start, then at this interval. */
const FIRST_SWEEP_MS = 60_000;
const SWEEP_INTERVAL_MS = 6 * 3600_000;
/** Files younger than this are left alone: an upload in progress may have stored them and not committed yet. */
const MIN_FILE_AGE_MS = 3600_000;

/**
 * Removes photo files no photo row names (removeOrphanFiles), a minute after start and every six hours:
 * the files of uploads whose process died before their commit, or that could not learn whether their commit
 * happened. Only files older than an hour, and than twice the upload deadline, are looked at. Stopped on
 * close after its current run.
 */
export const photoOrphanSweepPlugin = fp<{ db: Db; storage: Storage; uploadTimeoutMs: number }>(
  async (app, { db, storage, uploadTimeoutMs }) => {
    const minAgeMs = Math.max(MIN_FILE_AGE_MS, 2 * uploadTimeoutMs);
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> | undefined;
    const closing = new AbortController();
    const tick = () => {
      if (running || closing.signal.aborted) return;
      running = removeOrphanFiles(db, storage, new Date(Date.now() - minAgeMs), closing.signal)
        .then((removed) => {
          if (removed > 0) app.log.info({ removed }, 'removed photo files that no photo names');
        })
        .catch((error: unknown) => app.log.warn({ err: error }, 'photo orphan sweep failed'))
        .finally(() => {
          running = undefined;
        });
    };
    app.addHook('onReady', async () => {
      timer = setTimeout(function next() {
        tick();
        timer = setTimeout(next, SWEEP_INTERVAL_MS);
        timer.unref();
      }, FIRST_SWEEP_MS);
      timer.unref();
    });
    app.addHook('onClose', async () => {
      closing.abort();
      clearTimeout(timer);
      await running;
    });
  },
  { name: 'photo-orphan-sweep', dependencies: ['database'] },
);
