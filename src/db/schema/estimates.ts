import {
  bigint,
  boolean,
  foreignKey,
  index,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { users } from './companies.js';
import { lifecycle, listIndexes, searchText, tenantKey, timestamptz } from './columns.js';
import { customers } from './customers.js';
import { jobs } from './jobs.js';
import { locations } from './locations.js';

/** The values these tables store: the API schemas and the rules take them from here. */
export const PRICING_TYPES = ['flat', 'tiered'] as const;
export type PricingType = (typeof PRICING_TYPES)[number];
export const TIERS = ['good', 'better', 'best'] as const;
export type Tier = (typeof TIERS)[number];

/** Tier prices and add-on prices are kept in jsonb as exact decimal strings, like numeric columns. */
export type StoredTiers = Record<Tier, string>;
export type StoredAddon = { id: string; name: string; price: string };

export const ESTIMATE_STATUSES = ['Pending', 'Accepted', 'Declined', 'Expired'] as const;
export type EstimateStatus = (typeof ESTIMATE_STATUSES)[number];

export const templates = pgTable(
  'templates',
  {
    ...tenantKey,
    name: text('name').notNull(),
    description: text('description'),
    pricingType: text('pricing_type').$type<PricingType>().notNull(),
    basePrice: numeric('base_price', { precision: 12, scale: 2 }),
    /** {good, better, best} as decimal strings. */
    tiers: jsonb('tiers').$type<StoredTiers>(),
    /** [{id, name, price}] with price as a decimal string. */
    addons: jsonb('addons').$type<StoredAddon[]>().notNull().default([]),
    taxRate: numeric('tax_rate', { precision: 9, scale: 4 }).notNull().default('0'),
    isActive: boolean('is_active').notNull().default(true),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    ...listIndexes('templates', table),
  ],
);

export const estimates = pgTable(
  'estimates',
  {
    ...tenantKey,
    estimateNumber: text('estimate_number'),
    estimateSeq: bigint('estimate_seq', { mode: 'number' }),
    customerUuid: uuid('customer_uuid').notNull(),
    jobUuid: uuid('job_uuid'),
    templateUuid: uuid('template_uuid').notNull(),
    locationUuid: uuid('location_uuid'),
    createdByUserId: uuid('created_by_user_id').notNull(),
    status: text('status').$type<EstimateStatus>().notNull().default('Pending'),
    templateName: text('template_name').notNull(),
    pricingType: text('pricing_type').$type<PricingType>().notNull(),
    selectedTier: text('selected_tier').$type<Tier>(),
    baseAmount: numeric('base_amount', { precision: 12, scale: 2 }).notNull(),
    addonsAmount: numeric('addons_amount', { precision: 12, scale: 2 }).notNull(),
    taxAmount: numeric('tax_amount', { precision: 12, scale: 2 }).notNull(),
    totalAmount: numeric('total_amount', { precision: 12, scale: 2 }).notNull(),
    quantity: numeric('quantity', { precision: 12, scale: 3 }).notNull().default('1'),
    selectedAddons: jsonb('selected_addons').$type<string[]>(),
    adjustments: jsonb('adjustments'),
    serviceDescription: text('service_description'),
    internalNotes: text('internal_notes'),
    customerNotes: text('customer_notes'),
    responseNotes: text('response_notes'),
    expiresAt: timestamptz('expires_at'),
    respondedAt: timestamptz('responded_at'),
    /** The name the customer signed with when accepting on the share page, and when. */
    signatureName: text('signature_name'),
    signedAt: timestamptz('signed_at'),
    searchText: text('search_text').generatedAlwaysAs(
      searchText('estimate_number', 'template_name', 'service_description'),
    ),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId, table.customerUuid], foreignColumns: [customers.companyId, customers.uuid] }),
    foreignKey({ columns: [table.companyId, table.jobUuid], foreignColumns: [jobs.companyId, jobs.uuid] }),
    foreignKey({ columns: [table.companyId, table.templateUuid], foreignColumns: [templates.companyId, templates.uuid] }),
    foreignKey({ columns: [table.companyId, table.locationUuid], foreignColumns: [locations.companyId, locations.uuid] }),
    foreignKey({ columns: [table.companyId, table.createdByUserId], foreignColumns: [users.companyId, users.uuid] }),
    uniqueIndex('estimates_number_idx').on(table.companyId, table.estimateSeq),
    ...listIndexes('estimates', table, { status: table.status, customer: table.customerUuid, job: table.jobUuid }),
    index('estimates_search_idx').using('gin', table.companyId, table.searchText.op('gin_trgm_ops')),
  ],
);
