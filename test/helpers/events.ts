import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { Database } from '../../src/db/client.js';
import { expect } from 'vitest';
import { call } from './app.js';

export interface FeedEvent {
  uuid: string;
  type: string;
  object_type: string;
  object_uuid: string;
  created_at: string;
  data: { object: Record<string, any>; previous_attributes?: Record<string, unknown> };
}

/** Every visible event of the key's company (optionally of one record), oldest first, following `after`. */
export async function readFeed(app: FastifyInstance, key: string, query: Record<string, string> = {}): Promise<FeedEvent[]> {
  const all: FeedEvent[] = [];
  let after: string | undefined;
  for (;;) {
    const params = new URLSearchParams({ limit: '100', ...query, ...(after ? { after } : {}) });
    const response = await call(app, 'GET', `/api/v1/events?${params}`, { key });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    all.push(...response.body.data.events);
    if (!response.body.data.has_more) return all;
    after = all.at(-1)!.uuid;
  }
}

/**
 * The feed once it holds at least `count` events: an event becomes visible once every transaction
 * of this database that started before it has ended (DECISIONS §9.1 allows a delay after the commit),
 * which on a shared test server may take a moment.
 */
export async function waitForFeed(
  app: FastifyInstance,
  key: string,
  count: number,
  query: Record<string, string> = {},
  timeoutMs = 15_000,
): Promise<FeedEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await readFeed(app, key, query);
    if (events.length >= count) return events;
    if (Date.now() > deadline) {
      // What held the feed back, for the failure that follows.
      const holders = await transactionsInProgress(app).catch((error: unknown) => `not read: ${String(error)}`);
      console.error(`the feed held ${events.length} of ${count} events after ${timeoutMs} ms; in progress:`, holders);
      return events;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The transactions the server has in progress, with their backends: what may hold a feed back. */
async function transactionsInProgress(app: FastifyInstance): Promise<unknown> {
  const result = (await app.deps.database.db.execute(sql`select pg_current_snapshot()::text as snapshot,
    (select json_agg(json_build_object('pid', pid, 'xid', backend_xid, 'datname', datname, 'application', application_name,
      'state', state, 'since', xact_start, 'wait', wait_event_type, 'query', left(query, 200)))
     from pg_stat_activity where backend_xid is not null) as backends,
    (select json_agg(transaction) from pg_prepared_xacts) as prepared`)) as unknown as { rows: unknown[] };
  return JSON.stringify(result.rows[0]);
}

/** The events of one record, once `count` are visible. */
export function eventsOf(app: FastifyInstance, key: string, objectUuid: string, count: number) {
  return waitForFeed(app, key, count, { object_uuid: objectUuid });
}

/** The record as GET ?include_deleted=true answers it. */
export async function getRecord(app: FastifyInstance, key: string, path: string) {
  const response = await call(app, 'GET', `/api/v1${path}?include_deleted=true`, { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

/** How many events the company has in the table, visible in the feed yet or not. */
export async function storedEventCount(database: Database, companyId: string): Promise<number> {
  const result = (await database.db.execute(sql`select count(*)::int as n from events where company_id = ${companyId}`)) as unknown as {
    rows: Array<{ n: number }>;
  };
  return result.rows[0].n;
}
