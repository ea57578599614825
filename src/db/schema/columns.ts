import { sql } from 'drizzle-orm';
import { index, PgTimestamp, timestamp, uuid, type ExtraConfigColumn } from 'drizzle-orm/pg-core';

/**
 * Columns every tenant table shares: the (company_id, uuid) key and the lifecycle timestamps. company_id
 * comes from the authenticated key; the tables of records and events do not reference companies (a key on
 * the one companies row would lock it for every create of the company: migration 0021), while references
 * between records are composite keys (company_id, uuid), so no record can point into another company.
 */
export const tenantKey = {
  companyId: uuid('company_id').notNull(),
  uuid: uuid('uuid').notNull(),
};

export const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

/**
 * drizzle reads a timestamptz's text with `new Date(text)`, which takes PostgreSQL's text of the years 1 to 99
 * ('0050-01-01 00:00:00+00') for 1950. Those texts (they start with '00') are handed over in ISO 8601's form,
 * which Date reads as written; every other text goes the usual way. Inputs take the years 1 to 9999 (formats.ts).
 */
const EARLY_TIMESTAMPTZ = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::(\d\d))?$/;
const readTimestamp = PgTimestamp.prototype.mapFromDriverValue;
PgTimestamp.prototype.mapFromDriverValue = function (this: { withTimezone: boolean }, value: string): Date {
  const early = typeof value === 'string' && value.startsWith('00') && this.withTimezone ? EARLY_TIMESTAMPTZ.exec(value) : null;
  if (!early) return readTimestamp.call(this, value);
  const [, date, time, hours, minutes = '00'] = early;
  return new Date(`${date}T${time}${hours}:${minutes}`);
};

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
