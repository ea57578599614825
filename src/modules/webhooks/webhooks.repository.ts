import { and, count, eq, gte, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { webhookDeliveries, webhookEndpoints } from '../../db/schema/index.js';
import { countRows, findRow, insertRow, listOrder, paginate, selectPage, syncFilter, updateRow } from '../../shared/tenant-table.js';
import { countWhere } from '../../db/perf/record-counts.js';
import { pageOffset, toPage } from '../../shared/list-query.js';
import { eventJsonSql } from '../events/event.mapper.js';
import type { ListDeliveriesQuery, ListWebhookEndpointsQuery } from './webhooks.schemas.js';

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type EndpointInsert = typeof webhookEndpoints.$inferInsert;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export function findEndpoint(db: Db, companyId: string, uuid: string, options: { includeDeleted?: boolean; lock?: boolean } = {}) {
  return findRow(db, webhookEndpoints, companyId, uuid, options);
}

export function listEndpoints(db: Db, companyId: string, query: ListWebhookEndpointsQuery) {
  // webhook_endpoints has no count trigger: its totals are counted (db/perf/record-counts.ts).
  const filters = [syncFilter(webhookEndpoints, query)];
  return paginate(
    query,
    (offset, limit) =>
      selectPage(db, webhookEndpoints, companyId, { includeDeleted: query.include_deleted, filters, sort: query.sort, offset, limit }),
    () => countRows(db, webhookEndpoints, companyId, query.include_deleted, filters),
  );
}

/** Serializes the creates of one company's endpoints until commit, so the live count stays within the limit. */
export async function lockCompanyEndpoints(db: Db, companyId: string): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`webhook_endpoints.live:${companyId}`}, 0))`);
}

export async function countLiveEndpoints(db: Db, companyId: string): Promise<number> {
  const [row] = await db
    .select({ total: count() })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.companyId, companyId), sql`${webhookEndpoints.deletedAt} is null`));
  return Number(row?.total ?? 0);
}

export function insertEndpoint(db: Db, values: EndpointInsert): Promise<EndpointRow> {
  return insertRow(db, webhookEndpoints, values);
}

export function updateEndpoint(db: Db, companyId: string, uuid: string, values: Partial<EndpointInsert>) {
  return updateRow(db, webhookEndpoints, companyId, uuid, values);
}

/** Ends the endpoint's pending deliveries as failed, with the reason; an attempt in flight keeps its lease. */
export async function failPendingDeliveries(db: Db, companyId: string, endpointUuid: string, reason: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: 'failed', nextAttemptAt: null, lastError: reason, updatedAt: new Date() })
    .where(
      and(
        eq(webhookDeliveries.companyId, companyId),
        eq(webhookDeliveries.endpointUuid, endpointUuid),
        eq(webhookDeliveries.status, 'pending'),
      ),
    );
}

export async function listDeliveries(db: Db, companyId: string, endpointUuid: string, query: ListDeliveriesQuery) {
  const where = and(
    eq(webhookDeliveries.companyId, companyId),
    eq(webhookDeliveries.endpointUuid, endpointUuid),
    query.status ? eq(webhookDeliveries.status, query.status) : undefined,
    query.updated_since ? gte(webhookDeliveries.updatedAt, query.updated_since) : undefined,
  );
  const offset = pageOffset(query);
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(where)
    .orderBy(...listOrder(webhookDeliveries as never, { sort: query.sort }))
    .limit(query.limit)
    .offset(offset);
  const total =
    rows.length > 0 && rows.length < query.limit
      ? offset + rows.length
      : await countWhere(db, webhookDeliveries as never, where);
  return toPage(rows, total, query);
}

export async function findDelivery(db: Db, companyId: string, endpointUuid: string, uuid: string): Promise<DeliveryRow | null> {
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(eq(webhookDeliveries.companyId, companyId), eq(webhookDeliveries.endpointUuid, endpointUuid), eq(webhookDeliveries.uuid, uuid)),
    )
    .limit(1);
  return row ?? null;
}

/**
 * Makes a delivery due now, pending again if it had ended. A lease still running is kept, so an attempt in
 * flight is never joined by a second one.
 */
export async function scheduleRetryNow(db: Db, companyId: string, endpointUuid: string, uuid: string): Promise<DeliveryRow | null> {
  const [row] = await db
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: sql`now()`, updatedAt: sql`now()` })
    .where(
      and(eq(webhookDeliveries.companyId, companyId), eq(webhookDeliveries.endpointUuid, endpointUuid), eq(webhookDeliveries.uuid, uuid)),
    )
    .returning();
  return row ?? null;
}

/** A claimed delivery with what its attempt needs: the endpoint and the event row. */
export interface ClaimedDelivery {
  companyId: string;
  uuid: string;
  attempts: number;
  endpointUuid: string;
  url: string;
  secret: string;
  endpointLive: boolean;
  endpointEnabled: boolean;
  eventUuid: string;
  eventType: string;
  /** The event as GET /events/{uuid} answers it, as JSON text: the body of the attempt. */
  eventJson: string;
}

interface ClaimRow {
  company_id: string;
  uuid: string;
  attempts: number;
  endpoint_uuid: string;
  url: string;
  secret: string;
  endpoint_live: boolean;
  endpoint_enabled: boolean;
  event_uuid: string;
  event_type: string;
  event_json: string;
}

/** The columns of the claim's `event` alias. */
const eventAlias = {
  uuid: sql.raw('event.uuid'),
  type: sql.raw('event.type'),
  objectType: sql.raw('event.object_type'),
  objectUuid: sql.raw('event.object_uuid'),
  createdAt: sql.raw('event.created_at'),
  data: sql.raw('event.data'),
};

/**
 * Claims up to `limit` due deliveries in one statement (its own short transaction): rows locked by another
 * claimer are skipped, and each claimed row gets attempts + 1 and a lease until `leaseMs` from now. While
 * the lease runs no other claim takes the row; once it expires (a crashed instance) the row is due again.
 */
export async function claimDueDeliveries(db: Db, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  // The update joins the due rows by primary key only; the endpoint and the event are joined to what it
  // returns. Joined in the update itself, the planner could reach the deliveries through their endpoint
  // and read every delivery of the endpoint for each due row (125 ms a claim at a few thousand).
  const result = await db.execute(sql`
    with due as (
      select company_id, uuid from webhook_deliveries
      where status = 'pending' and next_attempt_at <= now()
        and (lease_expires_at is null or lease_expires_at <= now())
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    ), claimed as (
      update webhook_deliveries delivery
      set attempts = delivery.attempts + 1,
          lease_expires_at = now() + ${leaseMs} * interval '1 millisecond',
          last_attempt_at = now(),
          updated_at = now()
      from due
      where delivery.company_id = due.company_id and delivery.uuid = due.uuid
      returning delivery.company_id, delivery.uuid, delivery.attempts, delivery.endpoint_uuid, delivery.event_uuid
    )
    select claimed.company_id, claimed.uuid, claimed.attempts, claimed.endpoint_uuid,
      endpoint.url, endpoint.secret, endpoint.deleted_at is null as endpoint_live, endpoint.enabled as endpoint_enabled,
      event.uuid as event_uuid, event.type as event_type, ${eventJsonSql(eventAlias)} as event_json
    from claimed
    join webhook_endpoints endpoint on endpoint.company_id = claimed.company_id and endpoint.uuid = claimed.endpoint_uuid
    join events event on event.company_id = claimed.company_id and event.uuid = claimed.event_uuid
  `);
  const rows = (result as unknown as { rows: ClaimRow[] }).rows;
  return rows.map((row) => ({
    companyId: row.company_id,
    uuid: row.uuid,
    attempts: Number(row.attempts),
    endpointUuid: row.endpoint_uuid,
    url: row.url,
    secret: row.secret,
    endpointLive: row.endpoint_live,
    endpointEnabled: row.endpoint_enabled,
    eventUuid: row.event_uuid,
    eventType: row.event_type,
    eventJson: row.event_json,
  }));
}

export interface AttemptResult {
  status: 'pending' | 'succeeded' | 'failed';
  /** Seconds until the next attempt when status is pending. */
  retryInSeconds?: number;
  responseStatus: number | null;
  /** The first 1 KiB of the receiver's answer, when it answered. */
  responseBody: string | null;
  error: string | null;
  /** False when nothing was sent (the endpoint was disabled or deleted): the claim's attempt is not counted. */
  sent?: boolean;
}

/** The outcome of one claimed attempt, to record. */
export interface RecordedAttempt {
  claimed: Pick<ClaimedDelivery, 'companyId' | 'uuid' | 'attempts'>;
  result: AttemptResult;
}

/**
 * A retry asked for while the attempt ran (scheduleRetryNow wrote the row after its claim, which stamped
 * updated_at and last_attempt_at alike): whatever the attempt's outcome, the delivery is due again now.
 */
const RETRY_ASKED_DURING_ATTEMPT = sql.raw('delivery.updated_at > delivery.last_attempt_at');

/**
 * Records the outcomes of attempts in one statement and ends their leases. A row that has moved on since
 * its claim (the endpoint was disabled or deleted meanwhile, or a later claim took it after the lease
 * expired) is left as it is.
 */
export async function recordAttempts(db: Db, attempts: RecordedAttempt[]): Promise<void> {
  if (attempts.length === 0) return;
  const values = sql.join(
    attempts.map(
      ({ claimed, result }) =>
        sql`(${claimed.companyId}::uuid, ${claimed.uuid}::uuid, ${claimed.attempts}::int, ${result.status}::text,
             ${Math.round((result.retryInSeconds ?? 0) * 1000)}::int, ${result.responseStatus}::int, ${result.responseBody}::text,
             ${result.error}::text, ${result.sent !== false}::boolean)`,
    ),
    sql`, `,
  );
  await db.execute(sql`
    update webhook_deliveries delivery
    set status = case when ${RETRY_ASKED_DURING_ATTEMPT} then 'pending' else outcome.status end,
        attempts = case when outcome.sent then delivery.attempts else delivery.attempts - 1 end,
        next_attempt_at = case
          when ${RETRY_ASKED_DURING_ATTEMPT} then now()
          when outcome.status = 'pending' then now() + outcome.retry_ms * interval '1 millisecond'
        end,
        lease_expires_at = null,
        last_response_status = outcome.response_status,
        last_response_body = outcome.response_body,
        last_error = outcome.error,
        updated_at = now()
    from (values ${values}) as outcome(company_id, uuid, attempts, status, retry_ms, response_status, response_body, error, sent)
    where delivery.company_id = outcome.company_id and delivery.uuid = outcome.uuid
      and delivery.status = 'pending' and delivery.attempts = outcome.attempts
  `);
}
