import { eq, getTableName, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { apiKeys, companies, jobPhotos, numberingCounters, recordCounts, usageCounters, users } from '../../db/schema/index.js';

/** The sandbox of a live company, or null. */
export async function findSandbox(db: Db, liveCompanyId: string): Promise<{ uuid: string } | null> {
  const [row] = await db.select({ uuid: companies.uuid }).from(companies).where(eq(companies.sandboxOf, liveCompanyId)).limit(1);
  return row ?? null;
}

/**
 * Makes the sandbox of a live company: a company with the live one's record and add-ons, no monthly limit.
 * Null when another request made it at the same time (the unique sandbox_of decides).
 */
export async function insertSandbox(db: Db, liveCompanyId: string, sandboxId: string): Promise<{ uuid: string } | null> {
  const result = await db.execute(sql`
    insert into ${companies} (uuid, name, email, phone, address_line_1, address_line_2, city, state, postal_code, country, addons, monthly_request_limit, sandbox_of)
    select ${sandboxId}::uuid, name, email, phone, address_line_1, address_line_2, city, state, postal_code, country, addons, null, uuid
    from ${companies} where uuid = ${liveCompanyId} and sandbox_of is null
    on conflict (sandbox_of) do nothing
    returning uuid`);
  const [row] = (result as unknown as { rows: Array<{ uuid: string }> }).rows;
  return row ?? null;
}

/** The live company's numbering settings (prefix, padding) for its new sandbox; the numbers start at 1. */
export async function copyNumberingSettings(db: Db, liveCompanyId: string, sandboxId: string): Promise<void> {
  await db.execute(sql`
    insert into ${numberingCounters} (company_id, kind, prefix, padding)
    select ${sandboxId}::uuid, kind, prefix, padding from ${numberingCounters} where company_id = ${liveCompanyId}
    on conflict do nothing`);
}

/**
 * Copies the live company's users that the sandbox lacks, with the same ids: what a test key creates names
 * its user (created_by_user_id, a photo's user_id) and may assign any user of the company, and the composite
 * keys (company_id, user id) need that user in the sandbox.
 */
export async function mirrorUsers(db: Db, liveCompanyId: string, sandboxId: string): Promise<void> {
  await db.execute(sql`
    insert into ${users} (company_id, id, first_name, last_name, email, created_at, updated_at, deleted_at)
    select ${sandboxId}::uuid, id, first_name, last_name, email, created_at, updated_at, deleted_at
    from ${users} where company_id = ${liveCompanyId}
    on conflict do nothing`);
}

/** Holds the sandbox row until the transaction ends, so two emptyings never interleave. */
export async function lockSandbox(db: Db, sandboxId: string): Promise<void> {
  await db.select({ uuid: companies.uuid }).from(companies).where(eq(companies.uuid, sandboxId)).for('update');
}

/**
 * What emptying a sandbox keeps: its users (the company's people), the keys (they belong to the live
 * company), the usage counts, the numbering settings (reset instead) and the record counts (kept right by
 * their triggers as rows go).
 */
const KEPT_TABLES: ReadonlySet<string> = new Set(
  [users, apiKeys, usageCounters, numberingCounters, recordCounts].map((table) => getTableName(table)),
);

/**
 * The tables that hold a company's data, in an order that deletes rows before the rows they reference:
 * every table of the schema with a company_id column, read from the catalog, so a table added later is
 * emptied too without being listed here.
 */
export async function sandboxDataTables(db: Db): Promise<string[]> {
  const tablesResult = await db.execute(sql`
    select c.table_name as name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
    where c.table_schema = current_schema() and c.column_name = 'company_id' and t.table_type = 'BASE TABLE'`);
  const referencesResult = await db.execute(sql`
    select child.relname as child, parent.relname as parent from pg_constraint k
    join pg_class child on child.oid = k.conrelid
    join pg_class parent on parent.oid = k.confrelid
    where k.contype = 'f' and k.connamespace = current_schema()::regnamespace`);
  const tables = (tablesResult as unknown as { rows: Array<{ name: string }> }).rows
    .map((row) => row.name)
    .filter((name) => !KEPT_TABLES.has(name));
  const references = (referencesResult as unknown as { rows: Array<{ child: string; parent: string }> }).rows;
  return deletionOrder(tables, references);
}

/** Tables ordered so that each comes after every other table that references it. */
export function deletionOrder(tables: readonly string[], references: ReadonlyArray<{ child: string; parent: string }>): string[] {
  const remaining = new Set([...tables].sort());
  const ordered: string[] = [];
  while (remaining.size > 0) {
    const next = [...remaining].find(
      (table) => !references.some((edge) => edge.parent === table && edge.child !== table && remaining.has(edge.child)),
    );
    if (!next) throw new Error(`The tables ${[...remaining].join(', ')} reference each other in a loop`);
    ordered.push(next);
    remaining.delete(next);
  }
  return ordered;
}

/** The storage keys of the company's photo files, deleted ones included. */
export async function photoStorageKeys(db: Db, companyId: string): Promise<string[]> {
  const rows = await db.select({ key: jobPhotos.storageKey }).from(jobPhotos).where(eq(jobPhotos.companyId, companyId));
  return rows.map((row) => row.key);
}

export async function deleteCompanyRows(db: Db, table: string, companyId: string): Promise<void> {
  await db.execute(sql`delete from ${sql.identifier(table)} where company_id = ${companyId}`);
}

/** The sandbox's document numbers start again at 1 (its prefixes and padding stay). */
export async function resetNumbering(db: Db, sandboxId: string): Promise<void> {
  await db
    .update(numberingCounters)
    .set({ nextNumber: 1, overrideNextNumber: null, updatedAt: new Date() })
    .where(eq(numberingCounters.companyId, sandboxId));
}
