import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { jobs } from '../../db/schema/index.js';
import { assertRecordedWrite } from '../../shared/recorded-writes.js';

export const JOB_STATUSES = [
  'New',
  'Contacted',
  'Scheduled',
  'In Progress',
  'Needs Approval',
  'Ready to Invoice',
  'Invoiced',
  'Complete',
  'Estimate Sent',
  'Estimate Approved',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

interface StatusTimestamps {
  startedAt: Date | null;
  completedAt: Date | null;
  invoicedAt: Date | null;
}

/**
 * The timestamps a move to (or create in) `status` sets: In Progress -> started_at, Complete ->
 * completed_at, Invoiced -> invoiced_at. A timestamp already set is never re-stamped.
 */
export function statusTimestamps(status: string, current: StatusTimestamps | null, now = new Date()): Partial<StatusTimestamps> {
  switch (status) {
    case 'In Progress':
      return current?.startedAt ? {} : { startedAt: now };
    case 'Complete':
      return current?.completedAt ? {} : { completedAt: now };
    case 'Invoiced':
      return current?.invoicedAt ? {} : { invoicedAt: now };
    default:
      return {};
  }
}

/** Creating an invoice moves its job to Invoiced (stamping invoiced_at once). */
export async function markJobInvoiced(db: Db, companyId: string, jobUuid: string, now = new Date()): Promise<void> {
  assertRecordedWrite(db, jobs);
  await db
    .update(jobs)
    .set({ status: 'Invoiced', invoicedAt: sql`coalesce(${jobs.invoicedAt}, ${now.toISOString()}::timestamptz)`, updatedAt: now })
    .where(and(eq(jobs.companyId, companyId), eq(jobs.uuid, jobUuid)));
}

/** An invoice of the job became Paid: the job gets paid_at (once). */
export async function markJobPaid(db: Db, companyId: string, jobUuid: string, now = new Date()): Promise<void> {
  assertRecordedWrite(db, jobs);
  await db
    .update(jobs)
    .set({ paidAt: sql`coalesce(${jobs.paidAt}, ${now.toISOString()}::timestamptz)`, updatedAt: now })
    .where(and(eq(jobs.companyId, companyId), eq(jobs.uuid, jobUuid)));
}
