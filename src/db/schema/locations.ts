import { sql } from 'drizzle-orm';
import { boolean, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { lifecycle, listIndexes, tenantKey } from './columns.js';

export const locations = pgTable(
  'locations',
  {
    ...tenantKey,
    name: text('name').notNull(),
    locationCode: text('location_code'),
    address1: text('address1').notNull(),
    address2: text('address2'),
    city: text('city').notNull(),
    state: text('state').notNull(),
    zip: text('zip').notNull(),
    phone: text('phone'),
    timezone: text('timezone').notNull().default('America/New_York'),
    businessHours: jsonb('business_hours').$type<Record<string, unknown>>(),
    defaultTaxRules: jsonb('default_tax_rules').$type<Record<string, unknown>>(),
    serviceTypesOffered: jsonb('service_types_offered').$type<Record<string, unknown>>(),
    defaultPricingSetUuid: uuid('default_pricing_set_uuid'),
    isPrimary: boolean('is_primary').notNull().default(false),
    isActive: boolean('is_active').notNull().default(true),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    ...listIndexes('locations', table),
    uniqueIndex('locations_one_primary_idx')
      .on(table.companyId)
      .where(sql`${table.isPrimary} and ${table.deletedAt} is null`),
  ],
);
