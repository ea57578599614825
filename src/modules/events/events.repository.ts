import { and, eq, sql, type SQL } from 'drizzle-orm';
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
}

/** A feed page: its events as one JSON array text and whether more follow. */
export interface FeedPage {
  eventsJson: string;
  hasMore: boolean;
}

/**
 * The feed's visible, filtered events of a company. Only events of transactions older than every
 * transaction still running are visible: a transaction that started earlier but commits later can then
 * never place an event before one a reader has already passed. Values are placeholders: the statements
 * are prepared once per filter shape.
 */
function feedConditions(filters: FeedFilters): SQL {
  return and(
    eq(events.companyId, sql.placeholder('companyId')),
    sql`${events.txid} < pg_snapshot_xmin(pg_current_snapshot())`,
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
    // One row more than the page tells whether more follow.
    limit: filters.limit + 1,
  };
}

/** The feed's rows after the conditions, in (txid, seq) order: one more than the page tells whether more follow. */
function pageRows(filters: FeedFilters, after?: SQL): SQL {
  return sql`select ${eventJson} as event_json from ${events}
    where ${and(feedConditions(filters), after)}
    order by ${events.txid}, ${events.seq} limit ${sql.placeholder('limit')}`;
}

/**
 * The page's JSON array text from its rows' event JSON texts (null for none, as a lateral join gives).
 * The rows come back one by one and are joined here: aggregating them in PostgreSQL (a numbered window
 * and an ordered string_agg) cost it more than the whole rest of the statement.
 */
function toFeedPage(rows: ReadonlyArray<{ event_json: string | null }>, limit: number): FeedPage {
  const texts: string[] = [];
  for (const row of rows) if (row.event_json !== null) texts.push(row.event_json);
  return { eventsJson: `[${texts.slice(0, limit).join(',')}]`, hasMore: texts.length > limit };
}

/** The first page of the feed in (txid, seq) order. */
export async function selectFeedPage(db: Db, companyId: string, filters: FeedFilters): Promise<FeedPage> {
  const rows = await executePrepared<{ event_json: string }>(db, `events_feed_${shapeOf(filters)}`, () => pageRows(filters), feedParams(companyId, filters));
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
  const rows = await executePrepared<{ after_created_at: string | Date; event_json: string | null }>(
    db,
    `events_feed_after_${shapeOf(filters)}`,
    () => sql`select after_event.created_at as after_created_at, page.event_json
      from (select ${events.txid} as txid, ${events.seq} as seq, ${events.createdAt} as created_at from ${events}
            where ${events.companyId} = ${sql.placeholder('companyId')} and ${events.uuid} = ${sql.placeholder('after')}) after_event
      left join lateral (${pageRows(filters, sql`(${events.txid}, ${events.seq}) > (after_event.txid, after_event.seq)`)}) page on true`,
    { ...feedParams(companyId, filters), after: afterUuid },
  );
  if (rows.length === 0) return null;
  return { afterCreatedAt: new Date(rows[0].after_created_at), ...toFeedPage(rows, filters.limit) };
}

/** One event of the company as its JSON text, or null. */
export async function findEventJson(db: Db, companyId: string, uuid: string): Promise<string | null> {
  const [row] = await db
    .select({ json: eventJson })
    .from(events)
    .where(and(eq(events.companyId, companyId), eq(events.uuid, uuid)))
    .limit(1);
  return row?.json ?? null;
}

/**
 * Deletes up to `batchSize` events older than the cutoff (their deliveries go with them); returns how
 * many. Small batches, each its own statement, so the cleanup never holds many row locks for long.
 */
export async function deleteEventsBefore(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  const deleted = await db
    .delete(events)
    .where(
      sql`(${events.companyId}, ${events.uuid}) in (select company_id, uuid from events where created_at < ${cutoff.toISOString()}::timestamptz order by created_at limit ${batchSize})`,
    )
    .returning({ uuid: events.uuid });
  return deleted.length;
}
