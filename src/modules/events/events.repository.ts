import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { events } from '../../db/schema/index.js';

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

/** Live endpoints a company may have (DECISIONS §9.2): the most deliveries one event can get. */
const MAX_ENDPOINTS = 20;

/**
 * insertEventWithDeliveries for several events of one transaction, in one statement: the events are
 * written in the given order (their seq follows it), each with its deliveries.
 */
export async function insertEventsWithDeliveries(db: Db, batch: readonly NewEvent[], newDeliveryUuid: () => string): Promise<void> {
  if (batch.length === 0) return;
  // Delivery ids are made here so they are UUIDv7 like every other id; at most one per live endpoint.
  const deliveryIds = Array.from({ length: MAX_ENDPOINTS * batch.length }, () => newDeliveryUuid());
  const input = batch.map((event, position) => ({
    position,
    company_id: event.companyId,
    uuid: event.uuid,
    type: event.type,
    object_type: event.objectType,
    object_uuid: event.objectUuid,
    data: event.data,
  }));
  await db.execute(sql`
    with input as (
      select * from json_to_recordset(${JSON.stringify(input)}::json)
        as given(position int, company_id uuid, uuid uuid, type text, object_type text, object_uuid uuid, data json)
    ), inserted as (
      insert into events (company_id, uuid, type, object_type, object_uuid, data)
      select company_id, uuid, type, object_type, object_uuid, data from input order by position
      returning company_id, uuid, type
    ), subscribed as (
      select inserted.company_id, inserted.uuid as event_uuid, inserted.type, endpoint.uuid as endpoint_uuid,
        row_number() over (order by inserted.uuid, endpoint.uuid) as position
      from inserted
      join webhook_endpoints endpoint
        on endpoint.company_id = inserted.company_id
        and endpoint.deleted_at is null
        and endpoint.enabled
        and (inserted.type = any(endpoint.events) or '*' = any(endpoint.events))
    )
    insert into webhook_deliveries (company_id, uuid, endpoint_uuid, event_uuid, event_type)
    select subscribed.company_id, (${sql.raw(`array[${deliveryIds.map((id) => `'${id}'`).join(',')}]`)}::uuid[])[subscribed.position],
      subscribed.endpoint_uuid, subscribed.event_uuid, subscribed.type
    from subscribed
  `);
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
