import { bigint, foreignKey, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { companies } from './companies.js';
import { lifecycle } from './columns.js';

/** One counter row per company and document kind (invoice, estimate, payment), locked while a number is taken. */
export const numberingCounters = pgTable(
  'numbering_counters',
  {
    companyId: uuid('company_id').notNull(),
    kind: text('kind').notNull(),
    prefix: text('prefix').notNull(),
    padding: integer('padding').notNull().default(4),
    nextNumber: bigint('next_number', { mode: 'number' }).notNull().default(1),
    overrideNextNumber: bigint('override_next_number', { mode: 'number' }),
    updatedAt: lifecycle.updatedAt,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.kind] }),
    foreignKey({ columns: [table.companyId], foreignColumns: [companies.uuid] }),
  ],
);
