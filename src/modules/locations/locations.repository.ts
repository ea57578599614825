import { and, eq, ne, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { locations } from '../../db/schema/index.js';
import { countRows, findRow, insertRow, paginate, scoped, selectPage, softDelete, syncFilter, updateRow } from '../../shared/tenant-table.js';
import { assertRecordedWrite } from '../../shared/recorded-writes.js';
import type { ListLocationsQuery } from './locations.schemas.js';

export type LocationRow = typeof locations.$inferSelect;
export type LocationInsert = typeof locations.$inferInsert;

export function findLocation(db: Db, companyId: string, uuid: string, includeDeleted = false) {
  return findRow(db, locations, companyId, uuid, { includeDeleted });
}

export function listLocations(db: Db, companyId: string, query: ListLocationsQuery) {
  const filters = [syncFilter(locations, query)];
  return paginate(
    query,
    (offset, limit) => selectPage(db, locations, companyId, { includeDeleted: query.include_deleted, filters, sort: query.sort, offset, limit }),
    () => countRows(db, locations, companyId, query.include_deleted, filters),
  );
}

export function insertLocation(db: Db, values: LocationInsert): Promise<LocationRow> {
  return insertRow(db, locations, values);
}

export function updateLocation(db: Db, companyId: string, uuid: string, values: Partial<LocationInsert>) {
  return updateRow(db, locations, companyId, uuid, values);
}

/**
 * Serializes changes of the company's primary location until the transaction ends, so two requests
 * making different locations primary at once both succeed, the later one winning.
 */
export async function lockPrimary(db: Db, companyId: string) {
  await db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`locations.primary:${companyId}`}, 0))`);
}

/** The live primary locations of the company other than `exceptUuid` (at most one). */
export async function primaryUuids(db: Db, companyId: string, exceptUuid: string | null): Promise<string[]> {
  const rows = await db
    .select({ uuid: locations.uuid })
    .from(locations)
    .where(and(scoped(locations, companyId), eq(locations.isPrimary, true), exceptUuid ? ne(locations.uuid, exceptUuid) : undefined));
  return rows.map((row) => row.uuid);
}

/** Clears the primary flag of every other live location of the company (call under lockPrimary). */
export async function clearPrimary(db: Db, companyId: string, exceptUuid: string | null) {
  assertRecordedWrite(db, locations);
  await db
    .update(locations)
    .set({ isPrimary: false, updatedAt: new Date() })
    .where(
      and(
        scoped(locations, companyId),
        eq(locations.isPrimary, true),
        exceptUuid ? ne(locations.uuid, exceptUuid) : undefined,
      ),
    );
}

export function softDeleteLocation(db: Db, companyId: string, uuid: string) {
  return softDelete(db, locations, companyId, uuid);
}
