import { and, eq, ne, sql } from 'drizzle-orm';
import { OUTSIDE_FEED } from '../../db/bookkeeping.js';
import type { Db } from '../../db/client.js';
import { usageCounters } from '../../db/schema/index.js';

/** Adds this instance's buffered requests to its own row of the month. */
export async function addUsage(db: Db, companyId: string, period: string, instanceId: string, delta: number) {
  await db.execute(sql`insert into ${usageCounters} (company_id, period, instance_id, request_count)
    select ${companyId}::uuid, ${period}::text, ${instanceId}::uuid, ${delta}::int from ${OUTSIDE_FEED} as bookkeeping
    on conflict (company_id, period, instance_id)
    do update set request_count = ${usageCounters.requestCount} + excluded.request_count, updated_at = now()`);
}

/** Requests of the month counted by every other instance. */
export async function usageOfOtherInstances(db: Db, companyId: string, period: string, instanceId: string) {
  const [row] = await db
    .select({ total: sql<string>`coalesce(sum(${usageCounters.requestCount}), 0)` })
    .from(usageCounters)
    .where(
      and(
        eq(usageCounters.companyId, companyId),
        eq(usageCounters.period, period),
        ne(usageCounters.instanceId, instanceId),
      ),
    );
  return Number(row?.total ?? 0);
}

/** Requests of the month as stored: this instance's own row and the sum of every other instance's. */
export async function usageSplit(db: Db, companyId: string, period: string, instanceId: string) {
  const [row] = await db
    .select({
      mine: sql<string>`coalesce(sum(${usageCounters.requestCount}) filter (where ${usageCounters.instanceId} = ${instanceId}), 0)`,
      others: sql<string>`coalesce(sum(${usageCounters.requestCount}) filter (where ${usageCounters.instanceId} <> ${instanceId}), 0)`,
    })
    .from(usageCounters)
    .where(and(eq(usageCounters.companyId, companyId), eq(usageCounters.period, period)));
  return { mine: Number(row?.mine ?? 0), others: Number(row?.others ?? 0) };
}
