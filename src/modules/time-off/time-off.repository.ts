import { and, asc, desc, eq, gt, lt } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { timeOff } from '../../db/schema/index.js';
import { countRows, findRow, insertRow, listOrder, paginate, scoped, syncFilter, updateRow } from '../../shared/tenant-table.js';
import type { ListTimeOffQuery } from './time-off.schemas.js';

export type TimeOffRow = typeof timeOff.$inferSelect;
export type TimeOffInsert = typeof timeOff.$inferInsert;

export function findTimeOff(db: Db, companyId: string, uuid: string, options: { includeDeleted: boolean; lock?: boolean }) {
  return findRow(db, timeOff, companyId, uuid, options);
}

function listFilters(query: ListTimeOffQuery) {
  return [
    query.user_id ? eq(timeOff.userId, query.user_id) : undefined,
    query.from ? gt(timeOff.endsAt, query.from) : undefined,
    query.to ? lt(timeOff.startsAt, query.to) : undefined,
    syncFilter(timeOff, { updated_since: query.updated_since }),
  ];
}

function orderOf(query: ListTimeOffQuery) {
  if (query.sort === 'starts_at') return [asc(timeOff.startsAt), asc(timeOff.uuid)];
  if (query.sort === '-starts_at') return [desc(timeOff.startsAt), desc(timeOff.uuid)];
  return [...listOrder(timeOff, { sort: query.sort })];
}

export function listTimeOff(db: Db, companyId: string, query: ListTimeOffQuery) {
  const filters = listFilters(query);
  const where = and(scoped(timeOff, companyId, query.include_deleted), ...filters);
  return paginate<TimeOffRow>(
    query,
    (offset, limit) => db.select().from(timeOff).where(where).orderBy(...orderOf(query)).limit(limit).offset(offset),
    () => countRows(db, timeOff, companyId, query.include_deleted, filters),
  );
}

export function insertTimeOff(db: Db, values: TimeOffInsert): Promise<TimeOffRow> {
  return insertRow(db, timeOff, values);
}

export function updateTimeOff(db: Db, companyId: string, uuid: string, values: Partial<TimeOffInsert>) {
  return updateRow(db, timeOff, companyId, uuid, values);
}
