import { buildApp } from '/work/main/src/app.js';
import { loadConfig } from '/work/main/src/config.js';
import { createDatabase } from '/work/main/src/db/client.js';
const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent' });
const database = await createDatabase(config);
const app = await buildApp({ config, database });
await app.ready();
try { app.swagger(); console.log('ok'); } catch (e) { console.log((e as Error).stack?.slice(0, 1500)); }
await app.close(); await database.close();
