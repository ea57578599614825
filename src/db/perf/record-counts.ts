import { and, count, eq, getTableName, inArray, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../client.js';
import { recordCounts } from '../schema/index.js';
import { prepared } from './prepared.js';

/**
 * Opt-in speed for list totals: record_counts holds per-company live and deleted row counts, kept by the
 * maintain_record_counts trigger (migrations 0002 and 0006), optionally per value of one bucket column.
 *
 * COUNTED_TABLES is the TypeScript side of those triggers: a table is read from record_counts only when it
 * is listed here, and a bucket only when its column is the one listed. test/record-counts.test.ts checks that
 * every entry has its trigger (with that bucket column) and every trigger its entry, so a table whose
 * trigger is missing is counted with count(*) rather than reported wrong.
 */
export const COUNTED_TABLES: Readonly<Record<string, string | null>> = {
  users: null,
  locations: null,
  customers: null,
  jobs: 'status',
  templates: null,
  estimates: 'status',
  invoices: null,
  payments: 'status',
};

/** A filter `column IN values` on a table's registered bucket column. */
export interface CountedBucket {
  column: PgColumn;
  values: readonly string[];
}

export function bucketCondition(bucket: CountedBucket | undefined): SQL | undefined {
  return bucket ? inArray(bucket.column, [...bucket.values]) : undefined;
}

async function sumCounts(db: Db, companyId: string, keys: string[], includeDeleted: boolean): Promise<number> {
  const build = () =>
    db
      .select({
        live: sql<string>`coalesce(sum(${recordCounts.live}), 0)`,
        deleted: sql<string>`coalesce(sum(${recordCounts.deleted}), 0)`,
      })
      .from(recordCounts)
      .where(and(eq(recordCounts.companyId, sql.placeholder('companyId')), eq(recordCounts.tableName, sql.placeholder('tableName'))));
  let live = 0;
  let deleted = 0;
  for (const tableName of keys) {
    const params = { companyId, tableName };
    const rows = await prepared(db, 'count_records', build).execute(params);
    const row = rows[0] as { live: string; deleted: string } | undefined;
    live += Number(row?.live ?? 0);
    deleted += Number(row?.deleted ?? 0);
  }
  return live + (includeDeleted ? deleted : 0);
}

/** count(*) of the rows matching `where`. */
export async function countWhere(db: Db, table: PgTable, where: SQL | undefined): Promise<number> {
  const [row] = await db.select({ total: count() }).from(table).where(where);
  return Number(row?.total ?? 0);
}

/**
 * The total of a company's rows (`scope`) with no other filter than an optional bucket: from the trigger
 * counts when the table (and the bucket's column) is registered, else counted.
 */
export async function countedTotal(
  db: Db,
  table: PgTable,
  companyId: string,
  scope: SQL,
  includeDeleted: boolean,
  bucket?: CountedBucket,
): Promise<number> {
  const tableName = getTableName(table);
  const registered = tableName in COUNTED_TABLES;
  const bucketRegistered = bucket === undefined || COUNTED_TABLES[tableName] === bucket.column.name;
  if (!registered || !bucketRegistered) return countWhere(db, table, and(scope, bucketCondition(bucket)));
  const keys = bucket ? [...new Set(bucket.values)].map((value) => `${tableName}:${bucket.column.name}=${value}`) : [tableName];
  return sumCounts(db, companyId, keys, includeDeleted);
}
