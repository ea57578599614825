import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { scheduleHolds } from '../../db/schema/index.js';

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

/**
 * Writes the owner's holds, one per user, in the order of the user ids (so that two writers holding the
 * same users wait for each other in one order, never in a cycle). The exclusion constraint refuses a hold
 * that overlaps another of the same user (SQLSTATE 23P01).
 */
export async function insertHolds(
  db: Db,
  rows: Array<{ companyId: string; uuid: string; userId: string; startsAt: Date; endsAt: Date; visitUuid?: string; timeOffUuid?: string }>,
): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
  await db.insert(scheduleHolds).values(sorted);
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

/**
 * Every hold of these users overlapping [from, to), in one query (availability): through the GiST index of
 * the exclusion constraint, ordered by user and start.
 */
export function holdsInRange(db: Db, companyId: string, userIds: readonly string[], from: Date, to: Date) {
  return db
    .select({ userId: scheduleHolds.userId, startsAt: scheduleHolds.startsAt, endsAt: scheduleHolds.endsAt })
    .from(scheduleHolds)
    .where(
      and(
        eq(scheduleHolds.companyId, companyId),
        inArray(scheduleHolds.userId, [...userIds]),
        sql`tstzrange(${scheduleHolds.startsAt}, ${scheduleHolds.endsAt}) && tstzrange(${from.toISOString()}::timestamptz, ${to.toISOString()}::timestamptz)`,
      ),
    )
    .orderBy(asc(scheduleHolds.userId), asc(scheduleHolds.startsAt));
}
