import fp from 'fastify-plugin';
import { systemResolveHost } from '../modules/webhooks/address-safety.js';
import { DeliveryWorker } from '../modules/webhooks/delivery-worker.js';

/**
 * Runs the webhook delivery worker with the app (WEBHOOK_WORKER_ENABLED): it starts once the app is ready
 * and stops before the app closes anything (preClose), so the database is still open while attempts finish.
 */
export const deliveryWorkerPlugin = fp(
  async (app) => {
    const { config, database } = app.deps;
    if (!config.WEBHOOK_WORKER_ENABLED) return;
    const worker = new DeliveryWorker(
      database.db,
      config,
      { allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS, resolveHost: app.deps.resolveHost ?? systemResolveHost },
      app.log.child({ component: 'webhook-worker' }),
    );
    app.addHook('onReady', async () => worker.start());
    app.addHook('preClose', async () => worker.stop());
  },
  { name: 'webhook-delivery-worker', dependencies: ['database'] },
);
