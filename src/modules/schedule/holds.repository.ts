import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { prepared } from '../../db/perf/prepared.js';
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
  // Every row holds one owner over one interval; only the user differs.
  if (rows.length === 0) return;
  const sorted = [...rows].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
  // One prepared statement for any number of holds: the rows as parallel arrays, unnested in order.
  const statement = prepared(db, 'insert_schedule_holds', () =>
    db
      .insert(scheduleHolds)
      .select(
        sql`select ${sql.placeholder('companyId')}::uuid, hold.uuid, hold.user_id, ${sql.placeholder('startsAt')}::timestamptz,
              ${sql.placeholder('endsAt')}::timestamptz, ${sql.placeholder('visitUuid')}::uuid, ${sql.placeholder('timeOffUuid')}::uuid
            from unnest(${sql.placeholder('uuids')}::uuid[], ${sql.placeholder('userIds')}::uuid[]) with ordinality as hold(uuid, user_id, position)
            order by hold.position` as never,
      ),
  );
  const [first] = sorted;
  await statement.execute({
    companyId: first.companyId,
    startsAt: first.startsAt.toISOString(),
    endsAt: first.endsAt.toISOString(),
    visitUuid: first.visitUuid ?? null,
    timeOffUuid: first.timeOffUuid ?? null,
    uuids: sorted.map((row) => row.uuid),
    userIds: sorted.map((row) => row.userId),
  });
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
