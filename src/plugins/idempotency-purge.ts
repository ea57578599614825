import fp from 'fastify-plugin';
import type { Db } from '../db/client.js';
import { purgeExpiredKeys } from '../modules/idempotency/idempotency.service.js';

/**
 * Deletes expired Idempotency-Key records every IDEMPOTENCY_PURGE_INTERVAL_MS: started when the app is
 * ready, stopped on close after its current run has finished (registered after the database plugin, so
 * before the pool closes). A run still going when the next one is due is not doubled.
 */
export const idempotencyPurgePlugin = fp<{ db: Db; intervalMs: number }>(
  async (app, { db, intervalMs }) => {
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> | undefined;
    const tick = () => {
      if (running) return;
      running = purgeExpiredKeys(db)
        .then(() => undefined)
        .catch((error: unknown) => app.log.warn({ err: error }, 'idempotency purge failed'))
        .finally(() => {
          running = undefined;
        });
    };
    app.addHook('onReady', async () => {
      timer = setInterval(tick, intervalMs);
      timer.unref();
    });
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await running;
    });
  },
  { name: 'idempotency-purge', dependencies: ['database'] },
);
