/** The job statuses and the timestamps a status move sets: rules without I/O. */

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
