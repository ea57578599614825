import { sql } from 'drizzle-orm';
import {
  bigint,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
  type AnyPgColumn,
} from 'drizzle-orm/pg-core';
import { lifecycle, timestamptz } from './columns.js';

export const ALL_ADDONS = ['photos', 'numbering'] as const;

/** A key works on its company's live data or on the company's sandbox (DECISIONS §12). */
export const KEY_MODES = ['live', 'test'] as const;
export type KeyMode = (typeof KEY_MODES)[number];

export const companies = pgTable(
  'companies',
  {
    uuid: uuid('uuid').primaryKey(),
    name: text('name').notNull(),
    email: text('email').notNull(),
    phone: text('phone'),
    addressLine1: text('address_line_1'),
    addressLine2: text('address_line_2'),
    city: text('city'),
    state: text('state'),
    postalCode: text('postal_code'),
    country: text('country'),
    addons: text('addons').array().notNull().default(sql`ARRAY['photos','numbering']::text[]`),
    monthlyRequestLimit: bigint('monthly_request_limit', { mode: 'number' }),
    /**
     * Set on a sandbox: the live company it belongs to. A sandbox is a company of its own (tenancy keeps its
     * data apart), made on the first request of a test key; at most one per live company.
     */
    sandboxOf: uuid('sandbox_of').references((): AnyPgColumn => companies.uuid),
    createdAt: lifecycle.createdAt,
    updatedAt: lifecycle.updatedAt,
  },
  (table) => [uniqueIndex('companies_sandbox_of_idx').on(table.sandboxOf)],
);

export const users = pgTable(
  'users',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.uuid),
    /** Exposed as `id` in the API. */
    uuid: uuid('id').notNull(),
    firstName: text('first_name').notNull(),
    lastName: text('last_name').notNull(),
    email: text('email'),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    index('users_company_order_idx').on(table.companyId, table.createdAt.desc().nullsFirst(), table.uuid.desc().nullsFirst()),
  ],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey(),
    companyId: uuid('company_id').notNull(),
    userId: uuid('user_id').notNull(),
    name: text('name'),
    /** live: the company's data; test: its sandbox. The key row always belongs to the live company. */
    mode: text('mode', { enum: KEY_MODES }).notNull().default('live'),
    /** `*`, or `<area>:read` / `<area>:write` entries (src/auth/scopes.ts). */
    scopes: text('scopes').array().notNull().default(sql`ARRAY['*']::text[]`),
    /** The current secret's public prefix and hash; secrets rolled out during a grace period are in api_key_rolled_secrets. */
    keyPrefix: text('key_prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    allowedIps: text('allowed_ips').array().notNull().default(sql`ARRAY[]::text[]`),
    expiresAt: timestamptz('expires_at'),
    revokedAt: timestamptz('revoked_at'),
    /** Written in batches by each instance (src/modules/auth/last-used.ts): at most a minute behind, no write per request. */
    lastUsedAt: timestamptz('last_used_at'),
    createdAt: lifecycle.createdAt,
  },
  (table) => [
    uniqueIndex('api_keys_key_prefix_idx').on(table.keyPrefix),
    uniqueIndex('api_keys_key_hash_idx').on(table.keyHash),
    index('api_keys_company_order_idx').on(table.companyId, table.createdAt.desc().nullsFirst(), table.id.desc().nullsFirst()),
    foreignKey({ columns: [table.companyId, table.userId], foreignColumns: [users.companyId, users.uuid] }),
  ],
);

/**
 * The old secrets of rolled keys, each working until its grace period ends (POST /api_keys/{uuid}/roll).
 * Revoking the key ends them too; expired rows are removed at the key's next roll.
 */
export const apiKeyRolledSecrets = pgTable(
  'api_key_rolled_secrets',
  {
    keyHash: text('key_hash').primaryKey(),
    apiKeyId: uuid('api_key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    keyPrefix: text('key_prefix').notNull(),
    expiresAt: timestamptz('expires_at').notNull(),
  },
  (table) => [index('api_key_rolled_secrets_api_key_idx').on(table.apiKeyId)],
);

/**
 * Monthly request counts: one row per company, month and server instance, so instances
 * add their buffered counts without contending on a single row.
 */
export const usageCounters = pgTable(
  'usage_counters',
  {
    companyId: uuid('company_id')
      .notNull()
      .references(() => companies.uuid),
    period: text('period').notNull(),
    instanceId: uuid('instance_id').notNull(),
    requestCount: integer('request_count').notNull().default(0),
    updatedAt: lifecycle.updatedAt,
  },
  (table) => [primaryKey({ columns: [table.companyId, table.period, table.instanceId] })],
);
