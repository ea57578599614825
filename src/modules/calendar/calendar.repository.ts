import { and, asc, eq, gte, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { calendarLinks, jobs, users, visits } from '../../db/schema/index.js';

/** Whether the user is a live user of the company. */
export async function liveUserExists(db: Db, companyId: string, userId: string): Promise<boolean> {
  const rows = await db
    .select({ id: users.uuid })
    .from(users)
    .where(and(eq(users.companyId, companyId), eq(users.uuid, userId), isNull(users.deletedAt)))
    .limit(1);
  return rows.length > 0;
}

export async function insertCalendarLink(db: Db, values: typeof calendarLinks.$inferInsert): Promise<void> {
  await db.insert(calendarLinks).values(values);
}

/** Revokes every link of the user. */
export async function deleteCalendarLinks(db: Db, companyId: string, userId: string): Promise<void> {
  await db.delete(calendarLinks).where(and(eq(calendarLinks.companyId, companyId), eq(calendarLinks.userId, userId)));
}

/** The company and live user a token hash opens, or null. */
export async function findCalendarLink(
  db: Db,
  tokenHash: string,
): Promise<{ companyId: string; userId: string; firstName: string; lastName: string } | null> {
  const [row] = await db
    .select({ companyId: calendarLinks.companyId, userId: calendarLinks.userId, firstName: users.firstName, lastName: users.lastName })
    .from(calendarLinks)
    .innerJoin(users, and(eq(users.companyId, calendarLinks.companyId), eq(users.uuid, calendarLinks.userId)))
    .where(and(eq(calendarLinks.tokenHash, tokenHash), isNull(users.deletedAt)))
    .limit(1);
  return row ?? null;
}

/**
 * The visits of a feed: the user's visits that are not deleted and ended at or after `since`, earliest
 * first, with the job fields a calendar event shows (never the customer's email or phone).
 */
export function feedVisits(db: Db, companyId: string, userId: string, since: Date, limit: number) {
  return db
    .select({
      uuid: visits.uuid,
      title: visits.title,
      instructions: visits.instructions,
      timeZone: visits.timeZone,
      startsAt: visits.startsAt,
      endsAt: visits.endsAt,
      status: visits.status,
      sequence: visits.sequence,
      createdAt: visits.createdAt,
      updatedAt: visits.updatedAt,
      jobTitle: jobs.title,
      address1: jobs.serviceAddress1,
      address2: jobs.serviceAddress2,
      city: jobs.serviceCity,
      state: jobs.serviceState,
      zip: jobs.serviceZip,
    })
    .from(visits)
    .innerJoin(jobs, and(eq(jobs.companyId, visits.companyId), eq(jobs.uuid, visits.jobUuid)))
    .where(
      and(
        eq(visits.companyId, companyId),
        isNull(visits.deletedAt),
        sql`${visits.assignedUserIds} @> array[${userId}]::uuid[]`,
        gte(visits.endsAt, since),
      ),
    )
    .orderBy(asc(visits.startsAt), asc(visits.uuid))
    .limit(limit);
}

export type FeedVisit = Awaited<ReturnType<typeof feedVisits>>[number];
