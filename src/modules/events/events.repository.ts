import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { events, webhookDeliveries } from '../../db/schema/index.js';
import { prepared, unmappedRows } from '../../db/perf/prepared.js';
import type { EventRowFields } from './event.mapper.js';

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
  const inserted = await db
    .insert(events)
    .values(
      batch.map((event) => ({
        companyId: event.companyId,
        uuid: event.uuid,
        type: event.type,
        objectType: event.objectType,
        objectUuid: event.objectUuid,
        data: event.data,
      })),
    )
    .returning({
      companyId: events.companyId,
      uuid: events.uuid,
      type: events.type,
      endpoints: sql<string | null>`(select string_agg(endpoint.uuid::text, ',') from webhook_endpoints endpoint
        where endpoint.company_id = events.company_id and endpoint.deleted_at is null and endpoint.enabled
          and (events.type = any(endpoint.events) or '*' = any(endpoint.events)))`,
    });
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

const eventColumns = {
  uuid: events.uuid,
  type: events.type,
  objectType: events.objectType,
  objectUuid: events.objectUuid,
  createdAt: events.createdAt,
  // As stored: the feed places it in its answer without parsing it (toEventJson).
  dataJson: sql<string>`${events.data}::text`.as('data_json'),
};
export type EventRow = EventRowFields;

/** Filters of a feed page besides its position. */
export interface FeedFilters {
  types?: readonly string[];
  objectUuid?: string;
  limit: number;
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
  return { companyId, types: filters.types ? [...filters.types] : undefined, objectUuid: filters.objectUuid, limit: filters.limit };
}

/** The first page of the feed in (txid, seq) order. */
export async function selectFeedPage(db: Db, companyId: string, filters: FeedFilters): Promise<EventRow[]> {
  const statement = prepared(db, `events_feed_${shapeOf(filters)}`, () =>
    db
      .select(eventColumns)
      .from(events)
      .where(feedConditions(filters))
      .orderBy(asc(events.txid), asc(events.seq))
      .limit(sql.placeholder('limit')),
  );
  return (await statement.execute(feedParams(companyId, filters))) as EventRow[];
}

/** A page that follows an event: its creation time (null when it is not an event of the company) and the page. */
export interface FeedPageAfter {
  afterCreatedAt: Date | null;
  rows: EventRow[];
}

/** A row of the page-after statement as the driver answers it (the event's columns are null on an empty page). */
interface FeedRowAfter {
  after_created_at: Date | string;
  uuid: string | null;
  type: string;
  object_type: string;
  object_uuid: string;
  created_at: Date | string;
  data_json: string;
}

/**
 * The page of the feed after one of the company's events, in one statement: the event's position
 * (txid, seq) is looked up and the page read from the feed index right after it. The page is the
 * hottest wide read of the feed: its rows skip the ORM's per-cell mapping.
 */
export async function selectFeedPageAfter(db: Db, companyId: string, afterUuid: string, filters: FeedFilters): Promise<FeedPageAfter> {
  const statement = prepared(db, `events_feed_after_${shapeOf(filters)}`, () => {
    const afterEvent = db.$with('after_event').as(
      db
        .select({
          txid: sql<string>`${events.txid}`.as('after_txid'),
          seq: sql<number>`${events.seq}`.as('after_seq'),
          createdAt: sql<Date>`${events.createdAt}`.as('after_created_at'),
        })
        .from(events)
        .where(and(eq(events.companyId, sql.placeholder('companyId')), eq(events.uuid, sql.placeholder('after')))),
    );
    const page = db
      .select(eventColumns)
      .from(events)
      .where(and(feedConditions(filters), sql`(${events.txid}, ${events.seq}) > (${afterEvent.txid}, ${afterEvent.seq})`))
      .orderBy(asc(events.txid), asc(events.seq))
      .limit(sql.placeholder('limit'))
      .as('page');
    return db
      .with(afterEvent)
      .select({
        afterCreatedAt: afterEvent.createdAt,
        uuid: page.uuid,
        type: page.type,
        objectType: page.objectType,
        objectUuid: page.objectUuid,
        createdAt: page.createdAt,
        dataJson: page.dataJson,
      })
      .from(afterEvent)
      .leftJoinLateral(page, sql`true`);
  });
  const rows = (await unmappedRows(statement, { ...feedParams(companyId, filters), after: afterUuid })) as FeedRowAfter[];
  if (rows.length === 0) return { afterCreatedAt: null, rows: [] };
  const feed: EventRow[] = [];
  for (const row of rows) {
    if (row.uuid === null) continue;
    feed.push({
      uuid: row.uuid,
      type: row.type,
      objectType: row.object_type,
      objectUuid: row.object_uuid,
      createdAt: row.created_at,
      dataJson: row.data_json,
    });
  }
  return { afterCreatedAt: new Date(rows[0]!.after_created_at), rows: feed };
}

export async function findEvent(db: Db, companyId: string, uuid: string): Promise<EventRow | null> {
  const [row] = await db
    .select(eventColumns)
    .from(events)
    .where(and(eq(events.companyId, companyId), eq(events.uuid, uuid)))
    .limit(1);
  return (row as EventRow | undefined) ?? null;
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
