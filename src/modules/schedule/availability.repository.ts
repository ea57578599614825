import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { queryRows } from '../../db/perf/prepared.js';
import { locations, scheduleHolds, users } from '../../db/schema/index.js';

/** What availability reads, in one statement: who, in which zone, and who is held when. */
export interface AvailabilityInputs {
  /** The live users among those asked (any order), or the company's first `limit` live users by creation. */
  userIds: string[];
  /** The primary location's time zone, or null. */
  primaryTimeZone: string | null;
  /** Every hold of those users overlapping [from, to): parallel arrays, epoch milliseconds. */
  holdUserIds: string[];
  holdStarts: number[];
  holdEnds: number[];
}

/** Epoch milliseconds of a timestamptz, as float8 (exact below 2^53): the driver answers a number. */
const epochMs = (column: string) => sql.raw(`(extract(epoch from ${column}) * 1000)::float8`);

function statement(asked: boolean) {
  const chosen = asked
    ? sql`u.id = any(${sql.placeholder('ids')}::uuid[])`
    : sql`true`;
  // The holds are read through the GiST index of the exclusion constraint (company, user, range).
  return sql`with chosen as (
      select u.id, u.created_at from ${users} u
      where u.company_id = ${sql.placeholder('companyId')}::uuid and u.deleted_at is null and ${chosen}
      order by u.created_at, u.id limit ${sql.placeholder('limit')}
    ), held as (
      select h.user_id, ${epochMs('h.starts_at')} as starts, ${epochMs('h.ends_at')} as ends from ${scheduleHolds} h
      where h.company_id = ${sql.placeholder('companyId')}::uuid and h.user_id in (select id from chosen)
        and tstzrange(h.starts_at, h.ends_at) && tstzrange(${sql.placeholder('from')}::timestamptz, ${sql.placeholder('to')}::timestamptz)
    )
    select array(select id from chosen order by created_at, id) as user_ids,
      (select l.timezone from ${locations} l where l.company_id = ${sql.placeholder('companyId')}::uuid and l.is_primary and l.deleted_at is null limit 1) as primary_time_zone,
      coalesce((select array_agg(user_id) from held), '{}') as hold_user_ids,
      coalesce((select array_agg(starts) from held), '{}') as hold_starts,
      coalesce((select array_agg(ends) from held), '{}') as hold_ends`;
}

/**
 * The users (`ids`, or the first `limit` by creation when absent), the primary time zone and the users'
 * holds overlapping [from, to): one prepared statement.
 */
export async function availabilityInputs(db: Db, companyId: string, ids: readonly string[] | undefined, limit: number, from: Date, to: Date): Promise<AvailabilityInputs> {
  const asked = ids !== undefined;
  const [row] = await queryRows<{
    user_ids: string[];
    primary_time_zone: string | null;
    hold_user_ids: string[];
    hold_starts: number[];
    hold_ends: number[];
  }>(db, asked ? 'availability_inputs_asked' : 'availability_inputs_first', () => statement(asked), {
    companyId,
    ids: asked ? [...ids] : undefined,
    limit: asked ? ids.length : limit,
    from: from.toISOString(),
    to: to.toISOString(),
  });
  return {
    userIds: row.user_ids,
    primaryTimeZone: row.primary_time_zone,
    holdUserIds: row.hold_user_ids,
    holdStarts: row.hold_starts,
    holdEnds: row.hold_ends,
  };
}
