import { sql } from 'drizzle-orm';
import type { Changes } from '../changes/change-recorder.js';
import { visits } from '../../db/schema/index.js';
import { deleteHolds } from '../schedule/holds.repository.js';
import { openVisitsOfJob, updateVisit } from './visits.repository.js';

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
