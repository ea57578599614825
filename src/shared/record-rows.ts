import { getTableColumns, getTableName, is, SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { TenantTable } from './tenant-table.js';

/**
 * A new row as the database will hold it, made in the service: the values given, every other column's
 * default, the timestamps of the service's clock. Its record (the resource's mapper over this row) is then
 * the record its GET will answer, so a create can write its event without reading the row back.
 */

/** A column as an INSERT writes it. */
export interface RowColumn {
  name: string;
  sqlType: string;
  value: unknown;
}

interface ColumnInfo {
  key: string;
  column: PgColumn;
  sqlType: string;
  json: boolean;
}

const columnsOf = new WeakMap<object, ColumnInfo[]>();

/** The table's columns an INSERT writes: all but the generated ones, in declaration order. */
function writableColumns(table: TenantTable): ColumnInfo[] {
  let known = columnsOf.get(table);
  if (!known) {
    known = Object.entries(getTableColumns(table))
      .filter(([, column]) => !(column as PgColumn).generated && !(column as PgColumn & { generatedIdentity?: unknown }).generatedIdentity)
      .map(([key, column]) => {
        const sqlType = (column as PgColumn).getSQLType();
        return { key, column: column as PgColumn, sqlType, json: sqlType === 'jsonb' || sqlType === 'json' };
      });
    columnsOf.set(table, known);
  }
  return known;
}

/**
 * jsonb keeps no key order: it orders an object's keys by length, then byte by byte, and so does a GET.
 * The value a jsonb column will give back, for the record made before the row is read.
 */
export function asJsonb(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asJsonb);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value).sort((a, b) => {
    const [x, y] = [Buffer.from(a), Buffer.from(b)];
    return x.length - y.length || Buffer.compare(x, y);
  });
  return Object.fromEntries(keys.map((key) => [key, asJsonb((value as Record<string, unknown>)[key])]));
}

/**
 * The complete row of a create: the values given, then each column's default (a value or a function of the
 * schema; an SQL default cannot be known beforehand and must be given, except the timestamps), created_at
 * and updated_at from `now`, deleted_at null. jsonb values in the order the database keeps them.
 */
export function newRow<Row>(table: TenantTable, values: Record<string, unknown>, now: Date): Row {
  const row: Record<string, unknown> = {};
  for (const { key, column, sqlType } of writableColumns(table)) {
    let value = values[key];
    if (value === undefined) {
      if (key === 'createdAt' || key === 'updatedAt') value = now;
      else if (key === 'deletedAt') value = null;
      else if (column.defaultFn) value = column.defaultFn();
      else if (column.default !== undefined) {
        if (is(column.default, SQL)) {
          throw new Error(`${getTableName(table)}.${column.name} has an SQL default: a create in one statement must give its value`);
        }
        value = column.default;
      } else value = null;
    }
    row[key] = sqlType === 'jsonb' && value !== null ? asJsonb(value) : value;
  }
  return row as Row;
}

/**
 * A row after an update: the row read, the changed values over it (undefined leaves a column as it is;
 * jsonb in the order the database keeps), updated_at from `now`.
 */
export function changedRow<Row>(table: TenantTable, row: Row, values: Record<string, unknown>, now: Date): Row {
  const next: Record<string, unknown> = { ...(row as Record<string, unknown>) };
  for (const { key, sqlType } of writableColumns(table)) {
    const value = values[key];
    if (value === undefined) continue;
    next[key] = sqlType === 'jsonb' && value !== null ? asJsonb(value) : value;
  }
  next.updatedAt = now;
  return next as Row;
}

/** The row's columns with their values as the driver sends them (cast in SQL to the column's type). */
export function rowColumns(table: TenantTable, row: Record<string, unknown>): RowColumn[] {
  return writableColumns(table).map(({ key, column, sqlType, json }) => {
    const value = row[key];
    let encoded: unknown = value;
    if (value === null || value === undefined) encoded = null;
    else if (json) encoded = JSON.stringify(value);
    else if (value instanceof Date) encoded = value.toISOString();
    return { name: column.name, sqlType, value: encoded };
  });
}
