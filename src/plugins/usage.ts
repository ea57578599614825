import fp from 'fastify-plugin';
import type { UsageMeter } from '../modules/auth/usage-meter.js';

/**
 * The monthly usage meter's lifecycle: flushing while the app runs, a final flush on close. Registered
 * after the database plugin, so the final flush happens before the pool closes.
 */
export const usagePlugin = fp<{ meter: UsageMeter }>(
  async (app, { meter }) => {
    meter.start();
    app.addHook('onClose', async () => {
      await meter.stop().catch((error: unknown) => app.log.warn({ err: error }, 'final usage flush failed'));
    });
  },
  { name: 'usage', dependencies: ['database'] },
);
