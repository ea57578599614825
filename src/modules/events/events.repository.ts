import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { events, webhookDeliveries } from '../../db/schema/index.js';
import { prepared } from '../../db/perf/prepared.js';
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

/**
 * insertEventWithDeliveries for several events of one transaction. One statement writes the events (in
 * the given order, which their seq follows) and answers, per event, the live enabled endpoints that
 * subscribe to its type; their deliveries follow in a second statement only when there are any. Both run
 * in the caller's transaction.
 */
export async function insertEventsWithDeliveries(db: Db, batch: readonly NewEvent[], newDeliveryUuid: () => string): Promise<void> {
  if (batch.length === 0) return;
  const build = (rows: Array<Record<keyof NewEvent, unknown>>) =>
    db.insert(events).values(rows as Array<typeof events.$inferInsert>).returning({
      companyId: events.companyId,
      uuid: events.uuid,
      type: events.type,
      endpoints: sql<string | null>`(select string_agg(endpoint.uuid::text, ',') from webhook_endpoints endpoint
        where endpoint.company_id = events.company_id and endpoint.deleted_at is null and endpoint.enabled
          and (events.type = any(endpoint.events) or '*' = any(endpoint.events)))`,
    });
  type Inserted = Awaited<ReturnType<typeof build>>;
  const fields = ['companyId', 'uuid', 'type', 'objectType', 'objectUuid', 'data'] as const;
  // A write records one to a few events: those batch sizes are prepared statements, larger ones built.
  const inserted: Inserted =
    batch.length <= PREPARED_BATCH_SIZES
      ? ((await prepared(db, `insert_events_${batch.length}`, () =>
          build(batch.map((_, index) => Object.fromEntries(fields.map((field) => [field, sql.placeholder(`${field}${index}`)])) as Record<keyof NewEvent, unknown>)),
        ).execute(Object.fromEntries(batch.flatMap((event, index) => fields.map((field) => [`${field}${index}`, event[field]]))))) as Inserted)
      : await build(batch.map((event) => Object.fromEntries(fields.map((field) => [field, event[field]])) as Record<keyof NewEvent, unknown>));
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
  if (deliveries.length > 0) await db.insert(webhookDeliveries).values(deliveries);
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
    pageSize: filters.limit,
  };
}

/**
 * The page's rows in (txid, seq) order, numbered, as a subquery; `after` adds the condition that places
 * the page after an event's position.
 */
function pageRows(db: Db, filters: FeedFilters, after?: SQL) {
  return db
    .select({
      rowNumber: sql<number>`row_number() over (order by ${events.txid}, ${events.seq})`.as('row_number'),
      json: eventJson.as('event_json'),
    })
    .from(events)
    .where(and(feedConditions(filters), after))
    .orderBy(asc(events.txid), asc(events.seq))
    .limit(sql.placeholder('limit'))
    .as('page');
}

/** The page's JSON array text (first pageSize rows) and the count of rows read (pageSize + 1 means more). */
function pageAggregates(page: ReturnType<typeof pageRows>) {
  return {
    rows: sql<string>`count(${page.json})`.mapWith(Number),
    eventsJson: sql<string | null>`string_agg(${page.json}, ',' order by ${page.rowNumber}) filter (where ${page.rowNumber} <= ${sql.placeholder('pageSize')})`,
  };
}

function toFeedPage(row: { rows: number; eventsJson: string | null } | undefined, limit: number): FeedPage {
  return { eventsJson: `[${row?.eventsJson ?? ''}]`, hasMore: (row?.rows ?? 0) > limit };
}

/** The first page of the feed in (txid, seq) order. */
export async function selectFeedPage(db: Db, companyId: string, filters: FeedFilters): Promise<FeedPage> {
  const statement = prepared(db, `events_feed_${shapeOf(filters)}`, () => {
    const page = pageRows(db, filters);
    return db.select(pageAggregates(page)).from(page);
  });
  const [row] = (await statement.execute(feedParams(companyId, filters))) as Array<{ rows: number; eventsJson: string | null }>;
  return toFeedPage(row, filters.limit);
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
  const statement = prepared(db, `events_feed_after_${shapeOf(filters)}`, () => {
    const afterEvent = db.$with('after_event').as(
      db
        .select({
          txid: sql<string>`${events.txid}`.as('after_txid'),
          seq: sql<number>`${events.seq}`.as('after_seq'),
          createdAt: sql<string>`${events.createdAt}`.as('after_created_at'),
        })
        .from(events)
        .where(and(eq(events.companyId, sql.placeholder('companyId')), eq(events.uuid, sql.placeholder('after')))),
    );
    const page = pageRows(db, filters, sql`(${events.txid}, ${events.seq}) > (${afterEvent.txid}, ${afterEvent.seq})`);
    return db
      .with(afterEvent)
      .select({ afterCreatedAt: sql<string>`${afterEvent.createdAt}`, ...pageAggregates(page) })
      .from(afterEvent)
      .leftJoinLateral(page, sql`true`)
      .groupBy(afterEvent.createdAt);
  });
  const [row] = (await statement.execute({ ...feedParams(companyId, filters), after: afterUuid })) as Array<{
    afterCreatedAt: string | Date;
    rows: number;
    eventsJson: string | null;
  }>;
  if (!row) return null;
  return { afterCreatedAt: new Date(row.afterCreatedAt), ...toFeedPage(row, filters.limit) };
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
