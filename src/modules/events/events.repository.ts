import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { events, webhookDeliveries } from '../../db/schema/index.js';
import { executePrepared, prepared } from '../../db/perf/prepared.js';
import { MAX_LIVE_ENDPOINTS } from '../webhooks/webhooks.schemas.js';
import { eventJsonSql } from './event.mapper.js';

/** Event batches of up to this many events are written by prepared statements. */
const PREPARED_BATCH_SIZES = 4;

export interface NewEvent {
  companyId: string;
  uuid: string;
  type: string;
  objectType: string;
  objectUuid: string;
  data: unknown;
}

/**
 * Writes an event and, in the same statement, one pending delivery for every enabled, live webhook
 * endpoint of the company that subscribes to its type (DECISIONS §9.2). Runs inside the transaction of
 * the change, so the event, its deliveries and the change commit or roll back together.
 */
export async function insertEventWithDeliveries(db: Db, event: NewEvent, newDeliveryUuid: () => string): Promise<void> {
  await insertEventsWithDeliveries(db, [event], newDeliveryUuid);
}

/** The columns an event is written with, and one event's values for them (given, or placeholders). */
const EVENT_FIELDS = ['companyId', 'uuid', 'type', 'objectType', 'objectUuid', 'data'] as const;
type EventValues = Record<(typeof EVENT_FIELDS)[number], unknown>;

/**
 * A write records one to a few events: batches up to PREPARED_BATCH_SIZES are prepared statements, with
 * placeholders `<field><index>` for each event of the batch; larger ones are built.
 */
function placeholdersOf(size: number): EventValues[] {
  return Array.from(
    { length: size },
    (_, index) => Object.fromEntries(EVENT_FIELDS.map((field) => [field, sql.placeholder(`${field}${index}`)])) as EventValues,
  );
}

/** The parameters that fill placeholdersOf(batch.length). */
function paramsOf(batch: readonly EventValues[]): Record<string, unknown> {
  return Object.fromEntries(batch.flatMap((event, index) => EVENT_FIELDS.map((field) => [`${field}${index}`, event[field]])));
}

/**
 * Companies whose last recorded events had subscribed endpoints. Their next events and deliveries are
 * written by one statement (insertEventsAndDeliveries) instead of two. This only chooses the statement:
 * both paths find the endpoints in the same transaction, so a stale entry costs a few ids, never a delivery.
 */
const companiesWithEndpoints = new Set<string>();
const COMPANIES_WITH_ENDPOINTS_KEPT = 10_000;

function rememberEndpoints(companyId: string, present: boolean): void {
  if (!present) {
    companiesWithEndpoints.delete(companyId);
    return;
  }
  // Kept in order of last write, so beyond the bound the company written to longest ago goes first.
  companiesWithEndpoints.delete(companyId);
  if (companiesWithEndpoints.size >= COMPANIES_WITH_ENDPOINTS_KEPT) companiesWithEndpoints.delete(companiesWithEndpoints.values().next().value!);
  companiesWithEndpoints.add(companyId);
}

/**
 * insertEventWithDeliveries for several events of one transaction (one company's: a write records its own
 * company's changes). The events keep the given order, which their seq follows. For a company last seen
 * with subscribed endpoints, one statement writes the events and their deliveries; otherwise the events'
 * statement answers the subscribed endpoints, and their deliveries follow in a second statement only when
 * there are any (most companies have none). Both run in the caller's transaction.
 */
export async function insertEventsWithDeliveries(db: Db, batch: readonly NewEvent[], newDeliveryUuid: () => string): Promise<void> {
  if (batch.length === 0) return;
  const companyId = batch[0].companyId;
  if (companiesWithEndpoints.has(companyId)) {
    rememberEndpoints(companyId, (await insertEventsAndDeliveries(db, batch, newDeliveryUuid)) > 0);
    return;
  }
  const build = (rows: readonly EventValues[]) =>
    db.insert(events).values(rows as Array<typeof events.$inferInsert>).returning({
      companyId: events.companyId,
      uuid: events.uuid,
      type: events.type,
      endpoints: sql<string | null>`(select string_agg(endpoint.uuid::text, ',') from webhook_endpoints endpoint
        where ${subscribes('endpoint', 'events')})`,
    });
  type Inserted = Awaited<ReturnType<typeof build>>;
  const inserted: Inserted =
    batch.length <= PREPARED_BATCH_SIZES
      ? ((await prepared(db, `insert_events_${batch.length}`, () => build(placeholdersOf(batch.length))).execute(paramsOf(batch))) as Inserted)
      : await build(batch);
  const deliveries = inserted.flatMap((event) =>
    (event.endpoints ? event.endpoints.split(',') : []).map((endpointUuid) => ({
      companyId: event.companyId,
      // Made here so they are UUIDv7 like every other id.
      uuid: newDeliveryUuid(),
      endpointUuid,
      eventUuid: event.uuid,
      eventType: event.type,
    })),
  );
  if (deliveries.length > 0) {
    await db.insert(webhookDeliveries).values(deliveries);
    rememberEndpoints(companyId, true);
  }
}

/** Endpoint `endpoint` is live, enabled and subscribes to the type of event `event` (DECISIONS §9.2); both are aliases. */
function subscribes(endpoint: string, event: string): SQL {
  const [e, v] = [sql.raw(endpoint), sql.raw(event)];
  return sql`${e}.company_id = ${v}.company_id and ${e}.deleted_at is null and ${e}.enabled
    and (${v}.type = any(${e}.events) or '*' = any(${e}.events))`;
}

/**
 * The events and their deliveries in one statement; answers how many deliveries it wrote. Delivery ids
 * come from the service like every id: enough UUIDv7s for the most endpoints a company may have are sent
 * along and taken in order. Should a company ever have more (two endpoint creates racing past the limit),
 * the rest get random ids rather than no delivery.
 */
async function insertEventsAndDeliveries(db: Db, batch: readonly NewEvent[], newDeliveryUuid: () => string): Promise<number> {
  const ids = Array.from({ length: batch.length * MAX_LIVE_ENDPOINTS }, () => newDeliveryUuid());
  const statement = (rows: SQL, idsParam: unknown) => sql`with inserted as (
      insert into ${events} (company_id, uuid, type, object_type, object_uuid, data) values ${rows}
      returning company_id, uuid, type, seq
    ), targets as (
      select inserted.company_id, inserted.uuid, inserted.type, endpoint.uuid as endpoint_uuid,
        row_number() over (order by inserted.seq, endpoint.uuid) as n
      from inserted join webhook_endpoints endpoint on ${subscribes('endpoint', 'inserted')}
    ), made as (
      insert into ${webhookDeliveries} (company_id, uuid, endpoint_uuid, event_uuid, event_type)
      select company_id, coalesce((${idsParam}::uuid[])[n], gen_random_uuid()), endpoint_uuid, uuid, type from targets
      returning 1
    )
    select count(*)::int as made from made`;
  // Raw SQL: the json column's encoding is done here, as the query builder does it for the other path.
  const values = batch.map((event) => ({ ...event, data: JSON.stringify(event.data) }));
  const row = (event: EventValues) =>
    sql`(${event.companyId}::uuid, ${event.uuid}::uuid, ${event.type}, ${event.objectType}, ${event.objectUuid}::uuid, ${event.data}::json)`;
  const valuesList = (list: readonly EventValues[]) => sql.join(list.map(row), sql`, `);
  let result: { made: number } | undefined;
  if (batch.length <= PREPARED_BATCH_SIZES) {
    [result] = await executePrepared<{ made: number }>(
      db,
      `insert_events_deliveries_${batch.length}`,
      () => statement(valuesList(placeholdersOf(batch.length)), sql.placeholder('ids')),
      { ...paramsOf(values), ids },
    );
  } else {
    const built = await db.execute(statement(valuesList(values), sql.param(ids)));
    [result] = (built as unknown as { rows: Array<{ made: number }> }).rows;
  }
  return result?.made ?? 0;
}

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
 * The feed's horizon: an event is visible once its transaction id is below it. It is the lowest id of a
 * transaction that may still commit an event of this feed: the smallest id the statement's snapshot
 * sees in progress, or its xmax when none (every later transaction gets a larger id). A transaction that
 * started earlier but commits later can then never place an event before one a reader has already passed
 * (gap-free order, DECISIONS §9.1).
 *
 * In-progress transactions positively known to write no event of this feed are left out, so they cannot
 * hold the feed back (§11): those the server shows running in another database, or under another
 * application_name than this reader's connection (every instance of the API connects with the same one),
 * and transactions prepared for two-phase commit in another database. Whatever is not found as such (a
 * transaction that ended between the snapshot and the lookup, one of another user hidden from the lookup)
 * counts as one of ours and holds the horizon, so an error can only delay the feed, never skip an event.
 * The subquery is uncorrelated: PostgreSQL computes it once per statement, and looks up the activity only
 * when the snapshot has transactions in progress. The `not in` list never holds a null (one would make
 * every comparison unknown, the minimum empty and the horizon xmax): both of its sources exclude them.
 */
const FEED_HORIZON = sql.raw(`(select least(pg_snapshot_xmax(current_snapshot.snapshot), (
    select min(in_progress) from pg_snapshot_xip(current_snapshot.snapshot) as in_progress
    where in_progress::xid not in (
      select activity.backend_xid from pg_stat_get_activity(null) as activity
      where activity.backend_xid is not null
        and (activity.datid is distinct from (select oid from pg_database where datname = current_database())
          or activity.application_name is distinct from current_setting('application_name'))
      union all
      select prepared.transaction from pg_prepared_xact() as prepared
      where prepared.dbid <> (select oid from pg_database where datname = current_database())
    )))
  from (select pg_current_snapshot() as snapshot) as current_snapshot)`);

/** The feed's visible, filtered events of a company. Values are placeholders: the statements are prepared once per filter shape. */
function feedConditions(filters: FeedFilters): SQL {
  return and(
    eq(events.companyId, sql.placeholder('companyId')),
    sql`${events.txid} < ${FEED_HORIZON}`,
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

/** A page's rows: numbered from 1 (null n: no row, as a lateral join gives), the JSON null past the byte cut. */
type PageRow = { event_json: string | null; n: number | string | null };

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

/** The first page of the feed in (txid, seq) order. */
export async function selectFeedPage(db: Db, companyId: string, filters: FeedFilters): Promise<FeedPage> {
  const rows = await executePrepared<PageRow>(db, `events_feed_${shapeOf(filters)}`, () => pageRows(filters), feedParams(companyId, filters));
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
  const rows = await executePrepared<PageRow & { after_created_at: string | Date }>(
    db,
    `events_feed_after_${shapeOf(filters)}`,
    () => sql`select after_event.created_at as after_created_at, page.event_json, page.n
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
