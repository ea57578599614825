import fp from 'fastify-plugin';
import type { Database } from '../db/client.js';

export interface DatabasePluginOptions {
  database: Database;
  /** The app closes the database when it closes; false when the caller shares it with others. */
  owns: boolean;
}

/**
 * The database as part of the app's lifecycle. It must be the first plugin registered: fastify runs onClose
 * hooks in reverse order of registration (after the server has stopped accepting and in-flight requests
 * have finished), so this hook runs last, once every background job registered after it has stopped
 * with its final writes.
 */
export const databasePlugin = fp<DatabasePluginOptions>(
  async (app, { database, owns }) => {
    app.addHook('onClose', async () => {
      if (owns) await database.close();
    });
  },
  { name: 'database' },
);
