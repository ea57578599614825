/** The timestamps a job status move sets: rules without I/O (the statuses are in db/schema/jobs.ts). */

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
