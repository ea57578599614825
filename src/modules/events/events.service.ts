import type { Db } from '../../db/client.js';
import { invalidField, notFound } from '../../errors.js';
import * as repository from './events.repository.js';
import type { ListEventsQuery } from './events.schemas.js';

const DAY_MS = 24 * 3600 * 1000;

/** The oldest moment an event is kept (EVENT_RETENTION_DAYS). */
export function retentionCutoff(retentionDays: number, now = Date.now()): Date {
  return new Date(now - retentionDays * DAY_MS);
}

/**
 * A page of the feed after `after`: oldest first, gap-free (see the feed conditions of the repository).
 * An `after` that is not an event of this company, or is older than the retention period, is 400 naming it.
 */
export async function listEvents(db: Db, companyId: string, query: ListEventsQuery, retentionDays: number): Promise<repository.FeedPage> {
  const filters = { types: query.type, objectUuid: query.object_uuid, limit: query.limit, keptSince: retentionCutoff(retentionDays) };
  if (!query.after) return repository.selectFeedPage(db, companyId, filters);
  const page = await repository.selectFeedPageAfter(db, companyId, query.after, filters);
  if (!page) throw invalidField('after', 'is not an event of this feed (unknown, another company\'s, or no longer kept)', 'invalid_reference');
  if (page.afterCreatedAt < filters.keptSince) {
    throw invalidField('after', `is older than the ${retentionDays} days events are kept; start again without after`);
  }
  return page;
}

/** One event of the company as JSON text; 404 when unknown or no longer kept. */
export async function getEvent(db: Db, companyId: string, uuid: string, retentionDays: number): Promise<string> {
  const json = await repository.findEventJson(db, companyId, uuid, retentionCutoff(retentionDays));
  if (json === null) throw notFound('Event');
  return json;
}
