import { bigint, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';

/**
 * Live and soft-deleted row counts per company and table, kept by triggers in the same transaction as
 * the write. Each connection adds to its own shard row (backend pid mod 32), so concurrent writers do
 * not queue on one hot row; a total is the sum of at most 32 rows.
 */
export const recordCounts = pgTable(
  'record_counts',
  {
    companyId: uuid('company_id').notNull(),
    tableName: text('table_name').notNull(),
    shard: integer('shard').notNull(),
    live: bigint('live', { mode: 'number' }).notNull().default(0),
    deleted: bigint('deleted', { mode: 'number' }).notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.companyId, table.tableName, table.shard] })],
);
