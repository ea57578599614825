import { sql } from 'drizzle-orm';
import { index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from './columns.js';

/** Responses of POST requests sent with an Idempotency-Key, kept 24 hours per company and key. */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    companyId: uuid('company_id').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    /**
     * completed: written with the answer, in the transaction of the work it guards (or after a refusal, or
     * after work that writes nothing).
     * in_progress: a key held in a transaction that spans an outside effect (an email), completed before that
     * transaction commits, so never seen by others; or a claim an older version committed before its work.
     */
    state: text('state').notNull(),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    /** The record the request created: a document numbered at commit has its number written into the answer. */
    recordUuid: uuid('record_uuid'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.key] }),
    index('idempotency_keys_record_idx').on(table.companyId, table.recordUuid).where(sql`${table.recordUuid} is not null`),
  ],
);
