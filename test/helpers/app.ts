import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDatabase, type Database } from '../../src/db/client.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import type { Storage } from '../../src/storage/storage.js';
import type { ResolveHost } from '../../src/modules/webhooks/address-safety.js';
import { withDatabase } from './database-url.js';

export interface TestApp {
  app: FastifyInstance;
  database: Database;
  config: Config;
  databaseUrl: string | undefined;
  close(): Promise<void>;
}

/** A fresh database for the calling test file: a clone of the migrated template, or an in-memory PGlite. */
export async function createTestDatabase(): Promise<{ database: Database; url: string | undefined; drop(): Promise<void> }> {
  const serverUrl = inject('databaseServerUrl');
  const template = inject('templateDatabase');
  const baseConfig = { DATA_DIR: 'memory://', DATABASE_POOL_SIZE: 10, STATEMENT_TIMEOUT_MS: 10_000 };
  if (!serverUrl) {
    const database = await createDatabase({ ...baseConfig, DATABASE_URL: undefined });
    await migrateDatabase(database);
    return { database, url: undefined, drop: async () => undefined };
  }
  const name = `crm_test_${randomBytes(4).toString('hex')}_${template.replace('crm_test_tpl_', '')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`create database ${name} template ${template}`);
      break;
    } catch (error) {
      // Two files cloning the template at the same instant: try again shortly.
      if (attempt >= 20 || !/being accessed by other users/.test((error as Error).message)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200));
    }
  }
  await admin.end();
  const url = withDatabase(serverUrl, name);
  const database = await createDatabase({ ...baseConfig, DATABASE_URL: url });
  return {
    database,
    url,
    drop: async () => {
      const dropper = new pg.Client({ connectionString: serverUrl });
      await dropper.connect();
      await dropper.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
      await dropper.end();
    },
  };
}

export interface BuildTestAppOptions {
  env?: Record<string, string>;
  storage?: Storage;
  resolveHost?: ResolveHost;
}

/** The configuration of a test app: silent, no rate limits, data in memory; `env` adds or overrides. */
export function testConfig(env: Record<string, string> = {}) {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '0',
    UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '0',
    SHARE_RATE_LIMIT_PER_MINUTE: '0',
    DATA_DIR: 'memory://',
    ...env,
  });
}

/** Builds the app on a fresh database; closed automatically after the file's tests. */
export async function buildTestApp(options: BuildTestAppOptions = {}): Promise<TestApp> {
  const { database, url, drop } = await createTestDatabase();
  const config = testConfig({ ...(url ? { DATABASE_URL: url } : {}), ...options.env });
  const app = await buildApp({ config, database, storage: options.storage, ownsDatabase: true, resolveHost: options.resolveHost });
  await app.ready();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    // The app closes its database last (the shutdown order of app.ts).
    await app.close();
    await drop();
  };
  afterAll(close);
  return { app, database, config, databaseUrl: url, close };
}

export type Response = LightMyRequestResponse & { body: string };

/** JSON request helper: returns status, parsed body and headers. */
export async function call(
  app: FastifyInstance,
  method: InjectOptions['method'],
  url: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let payload: string | undefined;
  if (options.rawBody !== undefined) payload = options.rawBody;
  else if (options.body !== undefined) payload = JSON.stringify(options.body);
  if (payload !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  const response = await app.inject({ method, url, headers, payload });
  let json: any;
  try {
    json = response.json();
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, body: json, headers: response.headers, raw: response };
}
