import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { queryRows } from '../../db/perf/prepared.js';
import { locations, scheduleHolds, users } from '../../db/schema/index.js';
import { MAX_VISIT_MS } from './holds.repository.js';

/** What availability reads, in one statement: who, in which zone, and who is held when. */
export interface AvailabilityInputs {
  /** The live users among those asked (any order), or the company's first `limit` live users by creation. */
  userIds: string[];
  /** The primary location's time zone, or null. */
  primaryTimeZone: string | null;
  /** Every hold of those users overlapping [from, to), in epoch milliseconds. */
  holds: Array<{ userId: string; start: number; end: number }>;
}

/** Epoch milliseconds of a timestamptz as integer text (date_part is float8: rounded, exact at millisecond precision). */
const epochMs = (column: string) => sql.raw(`round(date_part('epoch', ${column}) * 1000)::int8`);

function statement(asked: boolean) {
  const chosen = asked ? sql`u.id = any(${sql.placeholder('ids')}::uuid[])` : sql`true`;
  const companyId = sql`${sql.placeholder('companyId')}::uuid`;
  const from = sql`${sql.placeholder('from')}::timestamptz`;
  const to = sql`${sql.placeholder('to')}::timestamptz`;
  // Visits' holds on schedule_holds_visit_window_idx (a visit lasts at most 24 hours: the range bounds
  // starts_at), time off's on schedule_holds_time_off_window_idx; index only. The holds come as one text,
  // "user start end" triples, which the service splits.
  return sql`with chosen as (
      select u.id, u.created_at from ${users} u
      where u.company_id = ${companyId} and u.deleted_at is null and ${chosen}
      order by u.created_at, u.id limit ${sql.placeholder('limit')}
    ), held as (
      select h.user_id, h.starts_at, h.ends_at from ${scheduleHolds} h
      where h.company_id = ${companyId} and h.user_id = any(array(select id from chosen)) and h.visit_uuid is not null
        and h.starts_at > ${from} - interval '${sql.raw(String(MAX_VISIT_MS))} milliseconds' and h.starts_at < ${to} and h.ends_at > ${from}
      union all
      select h.user_id, h.starts_at, h.ends_at from ${scheduleHolds} h
      where h.company_id = ${companyId} and h.user_id = any(array(select id from chosen)) and h.time_off_uuid is not null
        and h.ends_at > ${from} and h.starts_at < ${to}
    )
    select array(select id from chosen order by created_at, id) as user_ids,
      (select l.timezone from ${locations} l where l.company_id = ${companyId} and l.is_primary and l.deleted_at is null limit 1) as primary_time_zone,
      (select string_agg(user_id::text || ' ' || ${epochMs('starts_at')} || ' ' || ${epochMs('ends_at')}, ' ') from held) as holds`;
}

/**
 * The users (`ids`, or the first `limit` by creation when absent), the primary time zone and the users'
 * holds overlapping [from, to): one prepared statement.
 */
export async function availabilityInputs(db: Db, companyId: string, ids: readonly string[] | undefined, limit: number, from: Date, to: Date): Promise<AvailabilityInputs> {
  const asked = ids !== undefined;
  const [row] = await queryRows<{ user_ids: string[]; primary_time_zone: string | null; holds: string | null }>(
    db,
    asked ? 'availability_inputs_asked' : 'availability_inputs_first',
    () => statement(asked),
    { companyId, ids: asked ? [...ids] : undefined, limit: asked ? ids.length : limit, from: from.toISOString(), to: to.toISOString() },
  );
  const holds: AvailabilityInputs['holds'] = [];
  const parts = row.holds ? row.holds.split(' ') : [];
  for (let index = 0; index < parts.length; index += 3) {
    holds.push({ userId: parts[index], start: Number(parts[index + 1]), end: Number(parts[index + 2]) });
  }
  return { userIds: row.user_ids, primaryTimeZone: row.primary_time_zone, holds };
}
