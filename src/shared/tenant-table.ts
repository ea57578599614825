import { createHash } from 'node:crypto';
import { and, desc, eq, getTableColumns, gte, getTableName, isNull, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { databaseOf, type Db } from '../db/client.js';
import { apiJsonSelect, apiJsonText, type ApiFields, type ApiJsonRow } from '../db/perf/api-rows.js';
import { isPrepared, prepared, queryRows, type PreparedRead } from '../db/perf/prepared.js';
import { bucketCondition, countedTotal, countWhere, type CountedBucket } from '../db/perf/record-counts.js';
import { missingReference } from '../errors.js';
import { pageOffset, toPage, type ListQuery, type ListSort, type Page } from './list-query.js';
import { assertRecordedWrite } from './recorded-writes.js';

/** A tenant table: (company_id, uuid) key and soft delete. Scoping and soft-delete rules live here only. */
export type TenantTable = PgTable & {
  companyId: PgColumn;
  uuid: PgColumn;
  createdAt: PgColumn;
  updatedAt: PgColumn;
  deletedAt: PgColumn;
};

/** A value in a condition: given, or a placeholder of a prepared statement. */
type Bound = string | Placeholder;

/** The company's rows, without soft-deleted ones unless asked. */
export function scoped(table: TenantTable, companyId: Bound, includeDeleted = false): SQL {
  return includeDeleted
    ? eq(table.companyId, companyId)
    : (and(eq(table.companyId, companyId), isNull(table.deletedAt)) as SQL);
}

/** The company's row with this uuid, live unless includeDeleted. */
export function byUuid(table: TenantTable, companyId: Bound, uuid: Bound, includeDeleted = false): SQL {
  return and(scoped(table, companyId, includeDeleted), eq(table.uuid, uuid)) as SQL;
}

/**
 * Newest first, stable across pages. With a search term the order is written as an expression: the
 * planner then finds the matches through the trigram index and sorts them, instead of walking the
 * whole tenant in created_at order and testing every row against the pattern.
 */
export function newestFirst(table: TenantTable, search?: string) {
  if (search) return [sql`${table.createdAt} + interval '0 seconds' desc`, desc(table.uuid)] as const;
  return [desc(table.createdAt), desc(table.uuid)] as const;
}

/** What orders and narrows a list page: the sync parameters of §9.3 and a search term. */
export interface ListOrder {
  sort?: ListSort;
  updated_since?: Date;
  search?: string;
}

/**
 * The order of a list page: `sort` on created_at or updated_at, ties by uuid in the same direction, so
 * pages are stable. Each order is served by a (company_id, column, uuid) index walked forwards or
 * backwards, so a sync page reads the next rows instead of sorting the tenant. With a search term the
 * column is written as an expression, as in newestFirst.
 */
export function listOrder(table: TenantTable, options: ListOrder = {}) {
  const sort = options.sort ?? '-created_at';
  const column = sort.endsWith('updated_at') ? table.updatedAt : table.createdAt;
  const direction = sort.startsWith('-') ? sql`desc` : sql`asc`;
  const key = options.search ? sql`${column} + interval '0 seconds'` : sql`${column}`;
  return [sql`${key} ${direction}`, sql`${table.uuid} ${direction}`] as const;
}

/** `updated_since`: records whose updated_at is at or after it. */
export function syncFilter(table: TenantTable, options: ListOrder): SQL | undefined {
  return options.updated_since ? gte(table.updatedAt, options.updated_since) : undefined;
}

/** A LIKE pattern matching `term` anywhere, case-insensitively against a lower-cased column. */
export function containsPattern(term: string): string {
  return `%${term.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

export function searchMatches(column: PgColumn, term: string | undefined): SQL | undefined {
  return term ? sql`${column} like ${containsPattern(term)}` : undefined;
}

/** A page of rows and, when the query could tell it at no extra cost, the total. */
export interface RowsWithTotal<T> {
  rows: T[];
  total: number | null;
}

/**
 * One page and the exact total. The count is skipped when the page itself proves the total (a short page
 * that is not empty) or when the page query returned it.
 */
export async function paginate<T>(
  query: Pick<ListQuery, 'page' | 'limit'>,
  fetchRows: (offset: number, limit: number) => Promise<T[] | RowsWithTotal<T>>,
  countRows: () => Promise<number>,
): Promise<Page<T>> {
  const fetched = await fetchRows(pageOffset(query), query.limit);
  const rows = Array.isArray(fetched) ? fetched : fetched.rows;
  const known = Array.isArray(fetched) ? null : fetched.total;
  return toPage(rows, known ?? (await pageTotal(query, rows.length, countRows)), query);
}

/** The exact total for a page that found `found` rows: a short page that is not empty proves it; otherwise it is counted. */
export async function pageTotal(query: Pick<ListQuery, 'page' | 'limit'>, found: number, countRows: () => Promise<number>): Promise<number> {
  return found > 0 && found < query.limit ? pageOffset(query) + found : countRows();
}

/**
 * The exact number of rows matching the company scope, `filters` and `bucket`. With no other filter the
 * total comes from the trigger-maintained counts where they exist (db/perf/record-counts.ts).
 */
export async function countRows(
  db: Db,
  table: TenantTable,
  companyId: string,
  includeDeleted: boolean,
  filters: ReadonlyArray<SQL | undefined> = [],
  bucket?: CountedBucket,
): Promise<number> {
  const active = filters.filter((filter) => filter !== undefined);
  if (active.length > 0) {
    return countWhere(db, table, and(scoped(table, companyId, includeDeleted), ...active, bucketCondition(bucket)));
  }
  return countedTotal(db, table, companyId, scoped(table, companyId, includeDeleted), includeDeleted, bucket);
}

/** Sets deleted_at on a live row; false when there is none. */
export async function softDelete(db: Db, table: TenantTable, companyId: string, uuid: string): Promise<boolean> {
  assertRecordedWrite(db, table);
  const deleted = await db
    .update(table)
    .set({ deletedAt: new Date(), updatedAt: new Date() } as never)
    .where(byUuid(table, companyId, uuid))
    .returning({ uuid: table.uuid });
  return deleted.length > 0;
}

/**
 * A reference given in a body must be a live record of the same company; otherwise the field is
 * invalid (400), whether the record is missing, deleted or another company's.
 */
export async function requireReference(
  db: Db,
  table: TenantTable,
  companyId: string,
  field: string,
  uuid: string | null | undefined,
): Promise<void> {
  if (uuid === null || uuid === undefined) return;
  const statement = prepared(db, `reference_${getTableName(table)}`, () =>
    db.select({ uuid: table.uuid }).from(table).where(byUuidPlaceholders(table, false)).limit(1),
  );
  const found = await statement.execute({ companyId, uuid });
  if (found.length === 0) throw missingReference(field);
}

/** byUuid with placeholders for the company and the uuid, for a prepared statement. */
export function byUuidPlaceholders(table: TenantTable, includeDeleted: boolean): SQL {
  return byUuid(table, sql.placeholder('companyId'), sql.placeholder('uuid'), includeDeleted);
}

type RowOf<T extends TenantTable> = T['$inferSelect'];
type InsertOf<T extends TenantTable> = T['$inferInsert'];


/** The company's row with this uuid (live unless includeDeleted), or null; `lock` holds it FOR UPDATE. */
export async function findRow<T extends TenantTable>(
  db: Db,
  table: T,
  companyId: string,
  uuid: string,
  options: { includeDeleted?: boolean; lock?: boolean } = {},
): Promise<RowOf<T> | null> {
  const includeDeleted = options.includeDeleted ?? false;
  const name = `find_${getTableName(table)}_${includeDeleted ? 'any' : 'live'}${options.lock ? '_for_update' : ''}`;
  const statement = prepared(db, name, () => {
    const query = db
      .select()
      .from(table as TenantTable)
      .where(byUuidPlaceholders(table, includeDeleted))
      .limit(1);
    return options.lock ? query.for('update') : query;
  });
  const rows = await statement.execute({ companyId, uuid });
  return (rows[0] as RowOf<T> | undefined) ?? null;
}

/**
 * A page of a table's rows, newest first, within the company scope plus `filters`. The unfiltered page,
 * the most requested one, runs as a prepared statement. A search page counts its matches in the same
 * pass (a window count over the trigram matches the sort reads anyway).
 */
export async function selectPage<T extends TenantTable>(
  db: Db,
  table: T,
  companyId: string,
  options: { includeDeleted: boolean; filters?: ReadonlyArray<SQL | undefined>; search?: string; sort?: ListSort; offset: number; limit: number },
): Promise<RowsWithTotal<RowOf<T>>> {
  const active = (options.filters ?? []).filter((filter) => filter !== undefined);
  const sort = options.sort ?? '-created_at';
  if (active.length === 0) {
    const name = `page_${getTableName(table)}_${options.includeDeleted ? 'any' : 'live'}_${sort.replace('-', 'desc_')}`;
    const statement = prepared(db, name, () =>
      db
        .select()
        .from(table as TenantTable)
        .where(and(eq(table.companyId, sql.placeholder('companyId')), options.includeDeleted ? undefined : isNull(table.deletedAt)))
        .orderBy(...listOrder(table, { sort }))
        .limit(sql.placeholder('limit'))
        .offset(sql.placeholder('offset')),
    );
    const rows = (await statement.execute({ companyId, limit: options.limit, offset: options.offset })) as RowOf<T>[];
    return { rows, total: null };
  }
  const where = and(scoped(table, companyId, options.includeDeleted), ...active);
  const order = listOrder(table, { sort, search: options.search });
  if (!options.search) {
    const rows = await db.select().from(table as TenantTable).where(where).orderBy(...order).limit(options.limit).offset(options.offset);
    return { rows: rows as RowOf<T>[], total: null };
  }
  const counted = await db
    .select({ ...getTableColumns(table as TenantTable), fullCount: sql<string>`count(*) over ()` })
    .from(table as TenantTable)
    .where(where)
    .orderBy(...order)
    .limit(options.limit)
    .offset(options.offset);
  const total = counted.length > 0 ? Number(counted[0].fullCount) : null;
  const rows = counted.map(({ fullCount: _count, ...row }) => row) as RowOf<T>[];
  return { rows, total };
}

/**
 * The company's record with this uuid as the JSON text its GET answers (src/db/perf/api-rows.ts,
 * apiJsonSelect), live unless includeDeleted, or null: one prepared statement, and the text PostgreSQL writes
 * is sent as it is, with nothing parsed or serialized in Node.
 */
export async function findApiJson(db: Db, table: TenantTable, fields: ApiFields, companyId: string, uuid: string, includeDeleted: boolean): Promise<string | null> {
  const name = `api_json_${getTableName(table)}_${includeDeleted ? 'any' : 'live'}`;
  const rows = await queryRows<ApiJsonRow>(
    db,
    name,
    () => sql`${apiJsonSelect(table, fields)} where ${byUuidPlaceholders(table, includeDeleted)} limit 1`,
    { companyId, uuid },
  );
  return rows.length > 0 ? apiJsonText(rows[0], fields) : null;
}

/**
 * selectPage in the API form of `fields`, for pages without a search term, each item as its JSON text
 * (apiJsonSelect): the page is answered without an item parsed or serialized. The page's rows are chosen
 * first and only they are written as JSON (the rows an offset skips are not); the unfiltered page runs as a
 * prepared statement.
 */
export async function selectApiJsonPage(db: Db, table: TenantTable, fields: ApiFields, companyId: string, options: ApiPageOptions): Promise<RowsWithTotal<string>> {
  const active = (options.filters ?? []).filter((filter) => filter !== undefined);
  const sort = options.sort ?? '-created_at';
  const order = sql.join([...listOrder(table, { sort })], sql`, `);
  // The page's rows under the table's own name, so the columns of the JSON form name them as they are.
  const pageOf = (where: SQL, limit: unknown, offset: unknown) =>
    sql`${apiJsonSelect(table, fields, sql`(select * from ${table} where ${where} order by ${order} limit ${limit} offset ${offset}) as ${sql.identifier(getTableName(table))}`)} order by ${order}`;
  let rows: ApiJsonRow[];
  if (active.length === 0) {
    const name = `api_json_page_${getTableName(table)}_${options.includeDeleted ? 'any' : 'live'}_${sort.replace('-', 'desc_')}`;
    const live = options.includeDeleted ? sql`` : sql` and ${table.deletedAt} is null`;
    rows = await queryRows<ApiJsonRow>(
      db,
      name,
      () => pageOf(sql`${table.companyId} = ${sql.placeholder('companyId')}${live}`, sql.placeholder('limit'), sql.placeholder('offset')),
      { companyId, limit: options.limit, offset: options.offset },
    );
  } else {
    const result = await db.execute(pageOf(and(scoped(table, companyId, options.includeDeleted), ...active)!, options.limit, options.offset));
    rows = (result as unknown as { rows: ApiJsonRow[] }).rows;
  }
  return { rows: rows.map((row) => apiJsonText(row, fields)), total: null };
}

export interface ApiPageOptions {
  includeDeleted: boolean;
  filters?: ReadonlyArray<SQL | undefined>;
  sort?: ListSort;
  offset: number;
  limit: number;
}

/** A row as the driver answers it (column names, driver values) in drizzle's form: what a select would give. */
export function rowFromDriver<T extends TenantTable>(table: T, raw: Record<string, unknown>): RowOf<T> {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table as TenantTable))) {
    const value = raw[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as RowOf<T>;
}

/**
 * Inserts a row behind a data-modifying CTE (`with <cte> insert ...`), in one statement, and answers the row
 * and the value of each of `extras`: expressions over the inserted row or the CTE (e.g. `(select
 * shown_status from settled)`).
 */
export async function insertRowWith<T extends TenantTable, K extends string>(
  db: Db,
  table: T,
  values: InsertOf<T>,
  cte: SQL,
  extras: Record<K, SQL>,
): Promise<{ row: RowOf<T>; extras: Record<K, unknown> }> {
  assertRecordedWrite(db, table);
  const insert = db.insert(table).values(values as never).returning().getSQL();
  const names = Object.keys(extras) as K[];
  const more = sql.join(
    names.map((name) => sql`${extras[name]} as ${sql.identifier(`extra_${name}`)}`),
    sql`, `,
  );
  const result = await db.execute(sql`with ${cte} ${insert}, ${more}`);
  const [raw] = (result as unknown as { rows: Array<Record<string, unknown>> }).rows;
  const answered = Object.fromEntries(names.map((name) => [name, raw[`extra_${name}`]])) as Record<K, unknown>;
  return { row: rowFromDriver(table, raw), extras: answered };
}

/** Distinct column sets remembered per table for prepared inserts; beyond that, inserts are built as usual. */
const MAX_PREPARED_INSERTS = 64;
const preparedInsertCounts = new WeakMap<object, Map<string, number>>();

/**
 * Inserts a row and returns it, with the `computed` expressions of the new row when given. The statement is
 * prepared once per set of columns given (creates repeat a handful of shapes), so it is neither rebuilt nor
 * re-parsed per request.
 */
export async function insertRow<T extends TenantTable, C extends Record<string, SQL> = Record<never, SQL>>(
  db: Db,
  table: T,
  values: InsertOf<T>,
  computed?: C,
): Promise<RowOf<T> & { [K in keyof C]: unknown }> {
  assertRecordedWrite(db, table);
  const tableName = getTableName(table);
  const given = values as Record<string, unknown>;
  const columns = Object.keys(given).filter((key) => given[key] !== undefined).sort();
  // A null is written as NULL, not passed through the column's encoder (a json column would store 'null').
  const shape = columns.map((column) => (given[column] === null ? `${column}=null` : column));
  const returned = computed ? Object.keys(computed).sort().join(',') : '';
  const signature = createHash('sha1').update(`${tableName}:${shape.join(',')}:${returned}`).digest('hex').slice(0, 16);
  const name = `insert_${signature}`;
  const returning = (insert: { returning(fields?: Record<string, unknown>): unknown }) =>
    computed ? insert.returning({ ...getTableColumns(table as TenantTable), ...computed }) : insert.returning();
  let counts = preparedInsertCounts.get(databaseOf(db));
  if (!counts) {
    counts = new Map();
    preparedInsertCounts.set(databaseOf(db), counts);
  }
  const known = isPrepared(db, name);
  if (!known && (counts.get(tableName) ?? 0) >= MAX_PREPARED_INSERTS) {
    const [row] = (await returning(db.insert(table).values(values as never))) as Array<RowOf<T> & { [K in keyof C]: unknown }>;
    return row;
  }
  if (!known) counts.set(tableName, (counts.get(tableName) ?? 0) + 1);
  const placeholders = Object.fromEntries(columns.map((column) => [column, given[column] === null ? null : sql.placeholder(column)]));
  const statement = prepared(db, name, () => returning(db.insert(table).values(placeholders as never)) as { prepare(name: string): PreparedRead });
  const [row] = await statement.execute(values as Record<string, unknown>);
  return row as RowOf<T> & { [K in keyof C]: unknown };
}

/**
 * Updates a live row (stamping updated_at) and returns it, or null when there is none. `includeDeleted`
 * reaches a soft-deleted row too (bookkeeping such as an invoice balance after a refund).
 */
export async function updateRow<T extends TenantTable>(
  db: Db,
  table: T,
  companyId: string,
  uuid: string,
  values: Partial<InsertOf<T>>,
  options: { includeDeleted?: boolean } = {},
): Promise<RowOf<T> | null> {
  assertRecordedWrite(db, table);
  const rows = await db
    .update(table)
    .set({ ...values, updatedAt: new Date() } as never)
    .where(byUuid(table, companyId, uuid, options.includeDeleted))
    .returning();
  return ((rows as unknown[])[0] as RowOf<T> | undefined) ?? null;
}
