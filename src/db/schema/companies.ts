import { sql } from 'drizzle-orm';
import { bigint, foreignKey, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { lifecycle, timestamptz } from './columns.js';

export const ALL_ADDONS = ['photos', 'numbering'] as const;

export const companies = pgTable('companies', {
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
  createdAt: lifecycle.createdAt,
  updatedAt: lifecycle.updatedAt,
});

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
    keyPrefix: text('key_prefix').notNull(),
    keyHash: text('key_hash').notNull(),
    allowedIps: text('allowed_ips').array().notNull().default(sql`ARRAY[]::text[]`),
    revokedAt: timestamptz('revoked_at'),
    /** Set when an instance loads the key for a request, at most once a minute (not on every request). */
    lastUsedAt: timestamptz('last_used_at'),
    createdAt: lifecycle.createdAt,
  },
  (table) => [
    uniqueIndex('api_keys_key_prefix_idx').on(table.keyPrefix),
    uniqueIndex('api_keys_key_hash_idx').on(table.keyHash),
    foreignKey({ columns: [table.companyId, table.userId], foreignColumns: [users.companyId, users.uuid] }),
  ],
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
