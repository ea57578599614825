import { and, eq, gte, sql, type SQL } from 'drizzle-orm';
import { OUTSIDE_FEED } from '../../db/bookkeeping.js';
import type { Db } from '../../db/client.js';
import { events } from '../../db/schema/index.js';
import { executePrepared } from '../../db/perf/prepared.js';
import { eventJsonSql } from './event.mapper.js';

/** One event's JSON text (event.mapper.ts) with its feed position. */
const eventJson = eventJsonSql(events);

/** Filters of a feed page besides its position. */
export interface FeedFilters {
  types?: readonly string[];
  objectUuid?: string;
  limit: number;
  /** The oldest creation time kept: older events are gone from the feed even before the purge deletes them. */
  keptSince: Date;
}

/** A feed page: its events as one JSON array text and whether more follow. */
export interface FeedPage {
  eventsJson: string;
  hasMore: boolean;
}

/**
 * The feed's horizon: an event is visible once its position (`txid`, at or above its transaction's id) is
 * below it. It is the lowest id of a transaction that may still commit an event of this feed: the smallest id the statement's snapshot
 * sees in progress, or its xmax when none (every later transaction gets a larger id). A transaction that
 * started earlier but commits later can then never place an event before one a reader has already passed
 * (gap-free order, DECISIONS §9.1).
 *
 * In-progress transactions positively known to write no event of this feed are left out, so they cannot
 * hold the feed back (§11): those the server shows running in another database, or under another
 * application_name than this reader's connection (every instance of the API connects with the same one),
 * and transactions prepared for two-phase commit in another database. Whatever is not found as such
 * counts as one of ours and holds the horizon, so an error can only delay the feed, never skip an event.
 *
 * The server's activity is read after the statement's snapshot: a transaction of another database that
 * ends in between is not found, so it holds the horizon of this one read. `ended` says that the holder
 * was found nowhere (it has ended, or is hidden from this user); the reader then reads once more, with a
 * snapshot where it is over (readPageRows). The row is computed once per statement, and the activity is
 * looked up only when the snapshot has transactions in progress. The `not in` list never holds a null
 * (one would make every comparison unknown): both of its sources exclude them.
 */
const FEED_HORIZON = sql.raw(`(select least(pg_snapshot_xmax(current_snapshot.snapshot), holder.xid) as horizon,
    coalesce(holder.ended, false) as ended
  from (select pg_current_snapshot() as snapshot) as current_snapshot
  left join lateral (
    select in_progress as xid, in_progress::xid not in (
        select activity.backend_xid from pg_stat_get_activity(null) as activity where activity.backend_xid is not null
        union all
        select prepared.transaction from pg_prepared_xact() as prepared
      ) as ended
    from pg_snapshot_xip(current_snapshot.snapshot) as in_progress
    where in_progress::xid not in (
      select activity.backend_xid from pg_stat_get_activity(null) as activity
      where activity.backend_xid is not null
        and (activity.datid is distinct from (select oid from pg_database where datname = current_database())
          or activity.application_name is distinct from current_setting('application_name'))
      union all
      select prepared.transaction from pg_prepared_xact() as prepared
      where prepared.dbid <> (select oid from pg_database where datname = current_database())
    )
    order by in_progress limit 1
  ) as holder on true) as feed_horizon`);

/** The company's visible, filtered events (below `feed_horizon.horizon`). Values are placeholders: the statements are prepared once per filter shape. */
function feedConditions(filters: FeedFilters): SQL {
  return and(
    eq(events.companyId, sql.placeholder('companyId')),
    sql`${events.txid} < feed_horizon.horizon`,
    sql`${events.createdAt} >= ${sql.placeholder('keptSince')}::timestamptz`,
    filters.types ? sql`${events.type} = any(${sql.placeholder('types')}::text[])` : undefined,
    filters.objectUuid ? eq(events.objectUuid, sql.placeholder('objectUuid')) : undefined,
  ) as SQL;
}

const shapeOf = (filters: FeedFilters) => `${filters.types ? 't' : ''}${filters.objectUuid ? 'o' : ''}`;

function feedParams(companyId: string, filters: FeedFilters) {
  return {
    companyId,
    types: filters.types ? [...filters.types] : undefined,
    objectUuid: filters.objectUuid,
    keptSince: filters.keptSince.toISOString(),
    // One row more than the page tells whether more follow.
    limit: filters.limit + 1,
  };
}

/** The most event JSON a feed page holds (DECISIONS §11); a larger event is served alone on its page. */
export const FEED_PAGE_MAX_BYTES = 1024 * 1024;

/**
 * The feed's rows after the conditions, in (txid, seq) order, one more than the page (it tells whether
 * more follow), numbered from 1. Each row's JSON is returned only while the page's running size stays
 * within FEED_PAGE_MAX_BYTES (the first row always): rows past the cut come back as a number without
 * their JSON, so a page never brings more than about 1 MiB of large records into memory.
 */
function pageRows(filters: FeedFilters, after?: SQL): SQL {
  return sql`select case when sized.n = 1 or sized.bytes <= ${sql.raw(String(FEED_PAGE_MAX_BYTES))} then sized.event_json end as event_json, sized.n
    from (
      select page.event_json,
        row_number() over running as n,
        sum(octet_length(page.event_json)) over running as bytes
      from (
        select ${eventJson} as event_json, ${events.txid} as txid, ${events.seq} as seq from ${events}
        where ${and(feedConditions(filters), after)}
        order by ${events.txid}, ${events.seq} limit ${sql.placeholder('limit')}
      ) page
      window running as (order by page.txid, page.seq rows between unbounded preceding and current row)
    ) sized
    order by sized.n`;
}

/**
 * A page's rows: numbered from 1 (null n: no row, as a lateral join gives), the JSON null past the byte
 * cut; each row also says whether the horizon's holder had ended (FEED_HORIZON).
 */
type PageRow = { event_json: string | null; n: number | string | null; ended: boolean };

/**
 * The page's JSON array text from its rows' event JSON texts. The rows come back one by one and are
 * joined here: aggregating them in PostgreSQL (a numbered window and an ordered string_agg) cost it more
 * than the whole rest of the statement. The page ends at `limit` events or at the first row cut by size.
 */
function toFeedPage(rows: readonly PageRow[], limit: number): FeedPage {
  const texts: string[] = [];
  let hasMore = false;
  for (const row of rows) {
    if (row.n === null) continue;
    if (texts.length === limit || row.event_json === null) {
      hasMore = true;
      break;
    }
    texts.push(row.event_json);
  }
  return { eventsJson: `[${texts.join(',')}]`, hasMore };
}

/** How many times a page is read again at most when its horizon's holder had ended (readPageRows). */
const HORIZON_REREADS = 4;

/**
 * Runs a page statement, and again when its horizon was held by a transaction that had already ended
 * (FEED_HORIZON): the next read's snapshot no longer has it in progress, so a change committed before the
 * request is not hidden by a transaction that was over when the page was read. Another may end during
 * the next read as well (many short transactions elsewhere), hence a few reads, after which the feed is
 * only delayed, as by any transaction in progress.
 */
async function readPageRows<Row extends PageRow>(read: () => Promise<Row[]>): Promise<Row[]> {
  let rows = await read();
  for (let reread = 0; reread < HORIZON_REREADS && rows[0]?.ended; reread++) rows = await read();
  return rows;
}

/** The first page of the feed in (txid, seq) order. */
export async function selectFeedPage(db: Db, companyId: string, filters: FeedFilters): Promise<FeedPage> {
  const rows = await readPageRows(() =>
    executePrepared<PageRow>(
      db,
      `events_feed_${shapeOf(filters)}`,
      () => sql`select feed_horizon.ended, page.event_json, page.n
        from ${FEED_HORIZON} left join lateral (${pageRows(filters)}) page on true
        order by page.n`,
      feedParams(companyId, filters),
    ),
  );
  return toFeedPage(rows, filters.limit);
}

/**
 * The page of the feed after one of the company's events, in one statement: the event's position
 * (txid, seq) is looked up and the page read from the feed index right after it. Null when `after` is
 * not an event of the company; else its creation time and the page.
 */
export async function selectFeedPageAfter(
  db: Db,
  companyId: string,
  afterUuid: string,
  filters: FeedFilters,
): Promise<(FeedPage & { afterCreatedAt: Date }) | null> {
  const rows = await readPageRows(() =>
    executePrepared<PageRow & { after_created_at: string | Date }>(
      db,
      `events_feed_after_${shapeOf(filters)}`,
      () => sql`select after_event.created_at as after_created_at, feed_horizon.ended, page.event_json, page.n
        from (select ${events.txid} as txid, ${events.seq} as seq, ${events.createdAt} as created_at from ${events}
              where ${events.companyId} = ${sql.placeholder('companyId')} and ${events.uuid} = ${sql.placeholder('after')}) after_event
        cross join ${FEED_HORIZON}
        left join lateral (${pageRows(filters, sql`(${events.txid}, ${events.seq}) > (after_event.txid, after_event.seq)`)}) page on true
        order by page.n`,
      { ...feedParams(companyId, filters), after: afterUuid },
    ),
  );
  if (rows.length === 0) return null;
  return { afterCreatedAt: new Date(rows[0].after_created_at), ...toFeedPage(rows, filters.limit) };
}

/** One event of the company kept since `keptSince`, as its JSON text, or null. */
export async function findEventJson(db: Db, companyId: string, uuid: string, keptSince: Date): Promise<string | null> {
  const [row] = await db
    .select({ json: eventJson })
    .from(events)
    .where(and(eq(events.companyId, companyId), eq(events.uuid, uuid), gte(events.createdAt, keptSince)))
    .limit(1);
  return row?.json ?? null;
}

/**
 * Deletes up to `batchSize` events older than the cutoff (their deliveries go with them); returns how
 * many. Small batches, each its own statement, so the cleanup never holds many row locks for long. Its
 * transaction adds no event, so it holds no feed back (OUTSIDE_FEED): a reader passing it misses nothing.
 */
export async function deleteEventsBefore(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  const result = (await db.execute(sql`delete from ${events} as expiring
    using (select company_id, uuid from ${events} where created_at < ${cutoff.toISOString()}::timestamptz order by created_at limit ${batchSize}) as expired,
      ${OUTSIDE_FEED} as bookkeeping
    where expiring.company_id = expired.company_id and expiring.uuid = expired.uuid
    returning 1 as deleted`)) as unknown as { rows: unknown[] };
  return result.rows.length;
}
