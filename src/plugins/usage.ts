import fp from 'fastify-plugin';
import type { LastUsedRecorder } from '../modules/auth/last-used.js';
import type { UsageMeter } from '../modules/auth/usage-meter.js';

/**
 * The lifecycle of what each request notes in memory and an instance writes in batches: the monthly usage
 * meter and when each key was last used. Flushing while the app runs, a final flush on close. Registered
 * after the database plugin, so the final flushes happen before the pool closes.
 */
export const usagePlugin = fp<{ meter: UsageMeter; lastUsed: LastUsedRecorder }>(
  async (app, { meter, lastUsed }) => {
    meter.start();
    lastUsed.start();
    app.addHook('onClose', async () => {
      await meter.stop().catch((error: unknown) => app.log.warn({ err: error }, 'final usage flush failed'));
      await lastUsed.stop();
    });
  },
  { name: 'usage', dependencies: ['database'] },
);
