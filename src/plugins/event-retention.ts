import fp from 'fastify-plugin';
import type { Db } from '../db/client.js';
import { EventRetention } from '../modules/events/event-retention.js';

/** How often expired events are looked for. */
const EVENT_CLEANUP_INTERVAL_MS = 10 * 60 * 1000;

/**
 * Deletes events older than EVENT_RETENTION_DAYS in small batches in the background; stopped (and its
 * running pass awaited) on close, before the database plugin closes the pool.
 */
export const eventRetentionPlugin = fp<{ db: Db; retentionDays: number }>(
  async (app, { db, retentionDays }) => {
    const retention = new EventRetention(db, retentionDays, EVENT_CLEANUP_INTERVAL_MS, (error) =>
      app.log.warn({ err: error }, 'event cleanup failed'),
    );
    retention.start();
    app.addHook('onClose', async () => {
      await retention.stop();
    });
  },
  { name: 'event-retention', dependencies: ['database'] },
);
