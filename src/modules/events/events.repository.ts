import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';

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
  // Delivery ids are made here so they are UUIDv7 like every other id; one per live endpoint at most 20.
  const deliveryIds = Array.from({ length: 20 }, () => newDeliveryUuid());
  await db.execute(sql`
    with inserted as (
      insert into events (company_id, uuid, type, object_type, object_uuid, data)
      values (${event.companyId}, ${event.uuid}, ${event.type}, ${event.objectType}, ${event.objectUuid}, ${JSON.stringify(event.data)}::jsonb)
      returning company_id, uuid, type
    ), subscribed as (
      select endpoint.uuid as endpoint_uuid, row_number() over (order by endpoint.uuid) as position
      from webhook_endpoints endpoint, inserted
      where endpoint.company_id = inserted.company_id
        and endpoint.deleted_at is null
        and endpoint.enabled
        and (inserted.type = any(endpoint.events) or '*' = any(endpoint.events))
    )
    insert into webhook_deliveries (company_id, uuid, endpoint_uuid, event_uuid, event_type)
    select inserted.company_id, (${sql.raw(`array[${deliveryIds.map((id) => `'${id}'`).join(',')}]`)}::uuid[])[subscribed.position], subscribed.endpoint_uuid, inserted.uuid, inserted.type
    from inserted, subscribed
  `);
}
