import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { locations, users } from '../../db/schema/index.js';

/** The live users of the company among `ids`, or its first `limit` live users by creation when ids is absent. */
export async function liveUserIds(db: Db, companyId: string, ids: readonly string[] | undefined, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: users.uuid })
    .from(users)
    .where(and(eq(users.companyId, companyId), isNull(users.deletedAt), ids ? inArray(users.uuid, [...ids]) : undefined))
    .orderBy(asc(users.createdAt), asc(users.uuid))
    .limit(ids ? ids.length : limit);
  return rows.map((row) => row.id);
}

/** The primary location's time zone, or null. */
export async function primaryTimeZone(db: Db, companyId: string): Promise<string | null> {
  const [row] = await db
    .select({ timezone: locations.timezone })
    .from(locations)
    .where(and(eq(locations.companyId, companyId), eq(locations.isPrimary, true), isNull(locations.deletedAt)))
    .limit(1);
  return row?.timezone ?? null;
}
