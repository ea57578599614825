import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { events, webhookDeliveries } from '../../db/schema/index.js';

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
  data: events.data,
};
export type EventRow = { uuid: string; type: string; objectType: string; objectUuid: string; createdAt: Date; data: unknown };

/** A feed position: the writing transaction's id and the event's sequence within the table. */
export interface FeedPosition {
  txid: string;
  seq: number;
  createdAt: Date;
}

/** The feed position of one of the company's events, or null. */
export async function findFeedPosition(db: Db, companyId: string, uuid: string): Promise<FeedPosition | null> {
  const [row] = await db
    .select({ txid: sql<string>`${events.txid}::text`, seq: events.seq, createdAt: events.createdAt })
    .from(events)
    .where(and(eq(events.companyId, companyId), eq(events.uuid, uuid)))
    .limit(1);
  return row ? { txid: row.txid, seq: Number(row.seq), createdAt: row.createdAt } : null;
}

/**
 * A page of the feed in (txid, seq) order. Only events of transactions older than every transaction
 * still running are visible: a transaction that started earlier but commits later can then never
 * place an event before one a reader has already passed.
 */
export function selectFeedPage(
  db: Db,
  companyId: string,
  options: { after: FeedPosition | null; types?: readonly string[]; objectUuid?: string; limit: number },
): Promise<EventRow[]> {
  const { after } = options;
  return db
    .select(eventColumns)
    .from(events)
    .where(
      and(
        eq(events.companyId, companyId),
        sql`${events.txid} < pg_snapshot_xmin(pg_current_snapshot())`,
        after ? sql`(${events.txid}, ${events.seq}) > (${after.txid}::xid8, ${after.seq}::bigint)` : undefined,
        options.types ? inArray(events.type, [...options.types]) : undefined,
        options.objectUuid ? eq(events.objectUuid, options.objectUuid) : undefined,
      ),
    )
    .orderBy(asc(events.txid), asc(events.seq))
    .limit(options.limit) as Promise<EventRow[]>;
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
