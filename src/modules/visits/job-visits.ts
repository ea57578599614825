import { sql } from 'drizzle-orm';
import type { Changes } from '../changes/change-recorder.js';
import { visits } from '../../db/schema/index.js';
import { deleteHolds } from '../schedule/holds.repository.js';
import { liveVisitsOfJob, openVisitsOfJob, resequenceVisitsOfJob, stampVisits, updateVisit } from './visits.repository.js';

/**
 * Soft-deleting a job cancels its visits that are not Completed or Cancelled, in the job delete's
 * transaction (DECISIONS §13): each visit records visit.updated, and frees its technicians' time.
 */
export async function cancelVisitsOfJob(changes: Changes, jobUuid: string, now = new Date()): Promise<void> {
  const open = await openVisitsOfJob(changes.tx, changes.companyId, jobUuid);
  for (const uuid of open) {
    await changes.touch('visit', uuid);
    await updateVisit(changes.tx, changes.companyId, uuid, {
      status: 'Cancelled',
      cancelledAt: sql`coalesce(${visits.cancelledAt}, ${now.toISOString()}::timestamptz)` as never,
    });
    await deleteHolds(changes.tx, changes.companyId, { visitUuid: uuid });
  }
}

/** The job fields a visit's calendar event shows (SUMMARY when the visit has no title, LOCATION): body field -> row column. */
const FEED_FIELDS = {
  title: 'title',
  service_address1: 'serviceAddress1',
  service_address2: 'serviceAddress2',
  service_city: 'serviceCity',
  service_state: 'serviceState',
  service_zip: 'serviceZip',
} as const;
type FeedField = keyof typeof FEED_FIELDS;

/**
 * After a job update: when a field its visits' calendar events show changed, their SEQUENCE grows, so a
 * subscribed calendar takes the new version (DECISIONS §13: "SEQUENCE growing with every change").
 */
export async function jobFeedFieldsChanged(
  changes: Changes,
  jobUuid: string,
  before: { [F in FeedField as (typeof FEED_FIELDS)[F]]: string | null },
  body: Partial<Record<FeedField, unknown>>,
): Promise<void> {
  const fields = Object.keys(FEED_FIELDS) as FeedField[];
  if (!fields.some((field) => body[field] !== undefined && body[field] !== before[FEED_FIELDS[field]])) return;
  await resequenceVisitsOfJob(changes.tx, changes.companyId, jobUuid);
}

/**
 * A job update that gives the job another customer or location changes its visits too: their customer_uuid
 * and location_uuid are the job's (DECISIONS §13), so each live visit is a record changed as a side effect
 * (§9.1: visit.updated; §9.3: its updated_at moves). Call before the job's row changes, so each visit is read
 * as it was; answers what to pass to visitsMovedWithJob once the job is written.
 */
export async function touchVisitsMovedWithJob(
  changes: Changes,
  jobUuid: string,
  before: { customerUuid: string; locationUuid: string | null },
  body: { customer_uuid?: string; location_uuid?: string | null },
): Promise<string[]> {
  const moved =
    (body.customer_uuid !== undefined && body.customer_uuid !== before.customerUuid) ||
    (body.location_uuid !== undefined && body.location_uuid !== before.locationUuid);
  if (!moved) return [];
  const uuids = await liveVisitsOfJob(changes.tx, changes.companyId, jobUuid);
  for (const uuid of uuids) await changes.touch('visit', uuid);
  return uuids;
}

/** The visits touchVisitsMovedWithJob answered, stamped as changed (updated_at, and the calendar SEQUENCE). */
export async function visitsMovedWithJob(changes: Changes, uuids: readonly string[]): Promise<void> {
  await stampVisits(changes.tx, changes.companyId, uuids);
}
