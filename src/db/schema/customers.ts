import { boolean, foreignKey, index, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { lifecycle, listIndexes, searchText, tenantKey } from './columns.js';
import { locations } from './locations.js';

export const customers = pgTable(
  'customers',
  {
    ...tenantKey,
    firstName: text('first_name').notNull(),
    lastName: text('last_name').notNull(),
    companyName: text('company_name'),
    email: text('email'),
    phone: text('phone'),
    customerType: text('customer_type').$type<'Residential' | 'Commercial'>().notNull().default('Residential'),
    isVip: boolean('is_vip').notNull().default(false),
    physicalAddress1: text('physical_address1'),
    physicalAddress2: text('physical_address2'),
    physicalCity: text('physical_city'),
    physicalState: text('physical_state'),
    physicalZip: text('physical_zip'),
    billingAddress1: text('billing_address1'),
    billingAddress2: text('billing_address2'),
    billingCity: text('billing_city'),
    billingState: text('billing_state'),
    billingZip: text('billing_zip'),
    primaryServiceLocationUuid: uuid('primary_service_location_uuid'),
    notes: text('notes'),
    internalFlags: jsonb('internal_flags').$type<Record<string, unknown>>(),
    onMyWayNotifyVia: text('on_my_way_notify_via').$type<'email' | 'sms' | 'both'>(),
    searchText: text('search_text').generatedAlwaysAs(
      searchText(
        "first_name || ' ' || last_name",
        'company_name',
        'email',
        'phone',
        'uuid::text',
      ),
    ),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({
      columns: [table.companyId, table.primaryServiceLocationUuid],
      foreignColumns: [locations.companyId, locations.uuid],
    }),
    ...listIndexes('customers', table),
    index('customers_search_idx').using('gin', table.companyId, table.searchText.op('gin_trgm_ops')),
  ],
);
