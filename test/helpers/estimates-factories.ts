import type { FastifyInstance } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import type { Database } from '../../src/db/client.js';
import { jobs } from '../../src/db/schema/index.js';
import { createVia } from './factories.js';

export const flatTemplate = (overrides: Record<string, unknown> = {}) => ({
  name: 'AC tune-up',
  pricing_type: 'flat',
  base_price: 100,
  ...overrides,
});

export const tieredTemplate = (overrides: Record<string, unknown> = {}) => ({
  name: 'Water heater install',
  pricing_type: 'tiered',
  tiers: { good: 1000, better: 1500, best: 2250.5 },
  addons: [
    { id: 'permit', name: 'City permit', price: 75 },
    { id: 'haul', name: 'Haul away old unit', price: 49.99 },
  ],
  ...overrides,
});

export const makeTemplate = (app: FastifyInstance, key: string, body: Record<string, unknown> = flatTemplate()) =>
  createVia(app, key, '/templates', body);

/** Jobs are another module's; tests that need one insert the row directly. */
export async function insertJob(database: Database, companyId: string, customerUuid: string, title = 'Replace fan motor') {
  const uuid = uuidv7();
  await database.db.insert(jobs).values({ companyId, uuid, customerUuid, title });
  return { uuid, title, status: 'New' };
}

export const makeEstimate = (app: FastifyInstance, key: string, body: Record<string, unknown>) =>
  createVia(app, key, '/estimates', body);
