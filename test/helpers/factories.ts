import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { createApiKey, createCompany, createUser } from '../../src/modules/admin/provisioning.service.js';
import { call } from './app.js';

let sequence = 0;
const next = () => ++sequence;

export interface TestCompany {
  companyId: string;
  userId: string;
  key: string;
}

/** A new company with its owner user and a key; every test makes its own. */
export async function makeCompany(
  database: Database,
  options: { addons?: string[]; monthlyRequestLimit?: number | null; name?: string } = {},
): Promise<TestCompany> {
  const n = next();
  const created = await createCompany(database.db, {
    name: options.name ?? `Company ${n}`,
    email: `owner${n}@example.com`,
    addons: options.addons,
    monthlyRequestLimit: options.monthlyRequestLimit ?? null,
  });
  return { companyId: created.company_uuid, userId: created.user_id, key: created.api_key };
}

export async function makeUser(database: Database, companyId: string, firstName = 'Sam', lastName = 'Tech') {
  return (await createUser(database.db, { companyId, firstName, lastName, email: `tech${next()}@example.com` })).user_id;
}

export async function makeKey(database: Database, companyId: string, options: { userId?: string; allowedIps?: string[] } = {}) {
  return createApiKey(database.db, { companyId, ...options });
}

/** POSTs a valid record through the API and returns its data; fails the test on anything but 200. */
export async function createVia(app: FastifyInstance, key: string, path: string, body: Record<string, unknown>) {
  const response = await call(app, 'POST', `/api/v1${path}`, { key, body });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

export const validLocation = (overrides: Record<string, unknown> = {}) => ({
  name: `Shop ${next()}`,
  address1: '100 Congress Ave',
  city: 'Austin',
  state: 'TX',
  zip: '78701',
  ...overrides,
});

export const validCustomer = (overrides: Record<string, unknown> = {}) => ({
  first_name: 'Dana',
  last_name: `Reyes${next()}`,
  ...overrides,
});

export const makeLocation = (app: FastifyInstance, key: string, overrides: Record<string, unknown> = {}) =>
  createVia(app, key, '/locations', validLocation(overrides));

export const makeCustomer = (app: FastifyInstance, key: string, overrides: Record<string, unknown> = {}) =>
  createVia(app, key, '/customers', validCustomer(overrides));
