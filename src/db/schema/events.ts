import { sql } from 'drizzle-orm';
import { bigint, boolean, customType, foreignKey, index, integer, json, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { companies } from './companies.js';
import { lifecycle, tenantKey, timestamptz } from './columns.js';

/** The recorded objects (DECISIONS §9.1): events.object_type holds one, events.type `<object>.<action>`. */
export const OBJECT_TYPES = ['location', 'customer', 'job', 'job_photo', 'template', 'estimate', 'invoice', 'payment', 'visit', 'time_off'] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];
export const EVENT_ACTIONS = ['created', 'updated', 'deleted'] as const;
export type EventType = `${ObjectType}.${(typeof EVENT_ACTIONS)[number]}`;
export const EVENT_TYPES = OBJECT_TYPES.flatMap((object) => EVENT_ACTIONS.map((action) => `${object}.${action}` as EventType));

/**
 * The most live webhook endpoints a company may have: the webhooks service refuses more, and an event
 * write sends that many delivery ids per event.
 */
export const MAX_LIVE_ENDPOINTS = 20;
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

/** PostgreSQL's 64-bit transaction id; read as a decimal string. */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

/**
 * One row per committed change of a record (DECISIONS §9.1). `txid` is the event's feed position: the
 * latest transaction id handed out when the event is written (migration 0023), at or above the writing
 * transaction's own id and above that of every change the transaction waited for. The feed shows only
 * events below every transaction still running, and orders by (txid, seq), so an event that commits late
 * can never appear before one already shown, and the changes of one record appear in the order they were made.
 */
export const events = pgTable(
  'events',
  {
    companyId: uuid('company_id').notNull(),
    uuid: uuid('uuid').notNull(),
    seq: bigint('seq', { mode: 'number' }).generatedAlwaysAsIdentity(),
    txid: xid8('txid')
      .notNull()
      .default(sql`event_feed_position()`),
    type: text('type').notNull(),
    objectType: text('object_type').notNull(),
    objectUuid: uuid('object_uuid').notNull(),
    /** json, not jsonb: the record keeps the field order of its GET answer. */
    data: json('data').notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    index('events_company_feed_idx').on(table.companyId, table.txid, table.seq),
    index('events_company_object_idx').on(table.companyId, table.objectUuid, table.txid, table.seq),
    index('events_created_at_idx').on(table.createdAt),
  ],
);

/** Webhook endpoints of a company (DECISIONS §9.2). The secret is kept to sign deliveries. */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    ...tenantKey,
    url: text('url').notNull(),
    description: text('description'),
    /** Subscribed event types, or ['*'] for all. */
    events: text('events').array().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    secret: text('secret').notNull(),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId], foreignColumns: [companies.uuid] }),
    index('webhook_endpoints_company_order_idx').on(table.companyId, table.createdAt.desc().nullsFirst(), table.uuid.desc().nullsFirst()),
  ],
);

/**
 * One delivery of one event to one endpoint. `status` pending | succeeded | failed; a pending delivery is
 * due at next_attempt_at. A worker claims a due delivery (FOR UPDATE SKIP LOCKED) and leases it until
 * `lease_expires_at`, so one attempt runs at a time across instances and a crashed attempt is retried.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    companyId: uuid('company_id').notNull(),
    uuid: uuid('uuid').notNull(),
    endpointUuid: uuid('endpoint_uuid').notNull(),
    eventUuid: uuid('event_uuid').notNull(),
    eventType: text('event_type').notNull(),
    status: text('status').$type<(typeof DELIVERY_STATUSES)[number]>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastAttemptAt: timestamptz('last_attempt_at'),
    nextAttemptAt: timestamptz('next_attempt_at').defaultNow(),
    leaseExpiresAt: timestamptz('lease_expires_at'),
    lastResponseStatus: integer('last_response_status'),
    /** The first 1 KiB of the last answer's body (DECISIONS §11). */
    lastResponseBody: text('last_response_body'),
    lastError: text('last_error'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId, table.endpointUuid], foreignColumns: [webhookEndpoints.companyId, webhookEndpoints.uuid] }),
    foreignKey({ columns: [table.companyId, table.eventUuid], foreignColumns: [events.companyId, events.uuid] }).onDelete('cascade'),
    index('webhook_deliveries_endpoint_order_idx').on(
      table.companyId,
      table.endpointUuid,
      table.createdAt.desc().nullsFirst(),
      table.uuid.desc().nullsFirst(),
    ),
    index('webhook_deliveries_due_idx').on(table.nextAttemptAt).where(sql`status = 'pending'`),
  ],
);
