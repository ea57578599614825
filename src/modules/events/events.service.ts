import type { Db } from '../../db/client.js';
import { invalidField, notFound } from '../../errors.js';
import * as repository from './events.repository.js';
import type { EventRecord, ListEventsQuery } from './events.schemas.js';

const DAY_MS = 24 * 3600 * 1000;

export function toEventRecord(row: repository.EventRow): EventRecord {
  return {
    uuid: row.uuid,
    type: row.type,
    object_type: row.objectType,
    object_uuid: row.objectUuid,
    created_at: row.createdAt.toISOString(),
    data: row.data,
  } as EventRecord;
}

/** The oldest moment an event is kept (EVENT_RETENTION_DAYS). */
export function retentionCutoff(retentionDays: number, now = Date.now()): Date {
  return new Date(now - retentionDays * DAY_MS);
}

/**
 * A page of the feed after `after`: oldest first, gap-free (see selectFeedPage). An `after` that is not
 * an event of this company, or is older than the retention period, is 400 naming it.
 */
export async function listEvents(db: Db, companyId: string, query: ListEventsQuery, retentionDays: number) {
  let after: repository.FeedPosition | null = null;
  if (query.after) {
    after = await repository.findFeedPosition(db, companyId, query.after);
    if (!after) throw invalidField('after', 'is not an event of this feed (unknown, another company\'s, or no longer kept)');
    if (after.createdAt < retentionCutoff(retentionDays)) {
      throw invalidField('after', `is older than the ${retentionDays} days events are kept; start again without after`);
    }
  }
  const rows = await repository.selectFeedPage(db, companyId, {
    after,
    types: query.type,
    objectUuid: query.object_uuid,
    limit: query.limit + 1,
  });
  return { events: rows.slice(0, query.limit).map(toEventRecord), has_more: rows.length > query.limit };
}

export async function getEvent(db: Db, companyId: string, uuid: string): Promise<EventRecord> {
  const row = await repository.findEvent(db, companyId, uuid);
  if (!row) throw notFound('Event');
  return toEventRecord(row);
}
