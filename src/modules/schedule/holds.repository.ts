import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { executePrepared } from '../../db/perf/prepared.js';
import { scheduleHolds } from '../../db/schema/index.js';

/** A visit lasts, and so holds its users, at most this long (DECISIONS §13): a window's holds start at most this much before it. */
export const MAX_VISIT_MS = 24 * 60 * 60 * 1000;

export type HoldRow = typeof scheduleHolds.$inferSelect;

/** Whose holds: a visit's or a time-off entry's. */
export type HoldOwner = { visitUuid: string } | { timeOffUuid: string };

function ownerCondition(companyId: string, owner: HoldOwner) {
  return 'visitUuid' in owner
    ? and(eq(scheduleHolds.companyId, companyId), eq(scheduleHolds.visitUuid, owner.visitUuid))
    : and(eq(scheduleHolds.companyId, companyId), eq(scheduleHolds.timeOffUuid, owner.timeOffUuid));
}

/** Drops every hold of the owner. */
export async function deleteHolds(db: Db, companyId: string, owner: HoldOwner): Promise<void> {
  await db.delete(scheduleHolds).where(ownerCondition(companyId, owner));
}

export interface NewHold {
  companyId: string;
  uuid: string;
  userId: string;
  startsAt: Date;
  endsAt: Date;
  visitUuid?: string;
  timeOffUuid?: string;
}

/**
 * The INSERT of one owner's holds over one interval, one per user, from the parameters holdsParams gives
 * (the rows as parallel arrays, unnested in order), for a statement of its own or as a CTE of a larger
 * one; `condition` (a `where ...` clause) writes them only when it holds.
 */
export function insertHoldsSql(condition: SQL = sql``): SQL {
  return sql`insert into ${scheduleHolds} (company_id, uuid, user_id, starts_at, ends_at, visit_uuid, time_off_uuid)
    select ${sql.placeholder('holdCompany')}::uuid, hold.uuid, hold.user_id, ${sql.placeholder('holdStarts')}::timestamptz,
      ${sql.placeholder('holdEnds')}::timestamptz, ${sql.placeholder('holdVisit')}::uuid, ${sql.placeholder('holdTimeOff')}::uuid
    from unnest(${sql.placeholder('holdUuids')}::uuid[], ${sql.placeholder('holdUsers')}::uuid[]) with ordinality as hold(uuid, user_id, position)
    ${condition}
    order by hold.position`;
}

/**
 * The parameters of insertHoldsSql for rows that hold one owner over one interval (only the user differs),
 * in the order of the user ids: two writers holding the same users wait for each other in one order,
 * never in a cycle.
 */
export function holdsParams(rows: readonly NewHold[]): Record<string, unknown> {
  const sorted = [...rows].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
  const [first] = sorted;
  return {
    holdCompany: first.companyId,
    holdStarts: first.startsAt.toISOString(),
    holdEnds: first.endsAt.toISOString(),
    holdVisit: first.visitUuid ?? null,
    holdTimeOff: first.timeOffUuid ?? null,
    holdUuids: sorted.map((row) => row.uuid),
    holdUsers: sorted.map((row) => row.userId),
  };
}

/**
 * Writes the owner's holds, one per user (holdsParams's order). The exclusion constraint refuses a hold
 * that overlaps another of the same user (SQLSTATE 23P01).
 */
export async function insertHolds(db: Db, rows: readonly NewHold[]): Promise<void> {
  if (rows.length === 0) return;
  await executePrepared(db, 'insert_schedule_holds', () => insertHoldsSql(), holdsParams(rows));
}

/**
 * The holds of these users overlapping [startsAt, endsAt), other than the owner's own, earliest first:
 * what a refused write clashes with. Read through the GiST index of the exclusion constraint.
 */
export function overlappingHolds(db: Db, companyId: string, userIds: readonly string[], startsAt: Date, endsAt: Date, owner?: HoldOwner) {
  const notOwn = owner
    ? 'visitUuid' in owner
      ? sql`${scheduleHolds.visitUuid} is distinct from ${owner.visitUuid}::uuid`
      : sql`${scheduleHolds.timeOffUuid} is distinct from ${owner.timeOffUuid}::uuid`
    : undefined;
  return db
    .select()
    .from(scheduleHolds)
    .where(
      and(
        eq(scheduleHolds.companyId, companyId),
        inArray(scheduleHolds.userId, [...userIds]),
        sql`tstzrange(${scheduleHolds.startsAt}, ${scheduleHolds.endsAt}) && tstzrange(${startsAt.toISOString()}::timestamptz, ${endsAt.toISOString()}::timestamptz)`,
        notOwn,
      ),
    )
    .orderBy(asc(scheduleHolds.startsAt), asc(scheduleHolds.userId))
    .limit(100);
}
