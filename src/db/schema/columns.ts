import { sql } from 'drizzle-orm';
import { index, timestamp, uuid, type ExtraConfigColumn } from 'drizzle-orm/pg-core';

/** Columns every tenant table shares: the (company_id, uuid) key and the lifecycle timestamps. */
export const tenantKey = {
  companyId: uuid('company_id').notNull(),
  uuid: uuid('uuid').notNull(),
};

export const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export const lifecycle = {
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  deletedAt: timestamptz('deleted_at'),
};

/** Lower-cased search haystack; \x1f keeps matches from spanning two fields. */
export const searchText = (...parts: string[]) =>
  sql.raw(`lower(${parts.map((part) => `coalesce(${part}, '')`).join(` || chr(31) || `)})`);

/** The columns of a tenant table its list indexes are made of (the table's extra-config view). */
interface ListedColumns {
  companyId: ExtraConfigColumn;
  uuid: ExtraConfigColumn;
  createdAt: ExtraConfigColumn;
  updatedAt: ExtraConfigColumn;
  deletedAt: ExtraConfigColumn;
}

/**
 * The list indexes of a tenant table, named `<table>_company_<what>_idx`: the default order (newest
 * first, nulls first as the queries order, so PostgreSQL reads the index in order), the sync order
 * (updated_since, sort=updated_at), and one per filter column over live rows, newest first within the value.
 */
export function listIndexes(tableName: string, table: ListedColumns, filters: Record<string, ExtraConfigColumn> = {}) {
  // Made afresh for each index: the builder takes a column's direction once and resets it.
  const newestFirst = () => [table.createdAt.desc().nullsFirst(), table.uuid.desc().nullsFirst()] as const;
  return [
    index(`${tableName}_company_order_idx`).on(table.companyId, ...newestFirst()),
    index(`${tableName}_company_sync_idx`).on(table.companyId, table.updatedAt, table.uuid),
    ...Object.entries(filters).map(([what, column]) =>
      index(`${tableName}_company_${what}_idx`)
        .on(table.companyId, column, ...newestFirst())
        .where(sql`${table.deletedAt} is null`),
    ),
  ];
}
