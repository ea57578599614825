import type { Changes } from '../changes/change-recorder.js';
import { toJobResponse } from './jobs.mapper.js';
import type { SQL } from 'drizzle-orm';
import { invoicedJobCte, invoicedJobRow, lockJobWithRelations, markJobInvoiced, type JobRow, type JobWithRelations } from './jobs.repository.js';

/**
 * The job an invoice create bills: locked and read with its relations in one statement, and recorded as
 * touched (its GET form before the change). Null when it is not a live job of the company.
 */
export async function lockJobForInvoice(changes: Changes, uuid: string): Promise<JobWithRelations | null> {
  const job = await lockJobWithRelations(changes.tx, changes.companyId, uuid);
  if (job) changes.touched('job', uuid, toJobResponse(job));
  return job;
}

/**
 * Moves a job locked by lockJobForInvoice to Invoiced, stamping paid_at too when the new invoice is already
 * Paid. Its GET form after the change is built from the row written and the relations read under the lock,
 * which the invoice create does not change, so it is not read again. Answers the row as written.
 */
export async function invoiceJob(changes: Changes, locked: JobWithRelations, options: { paid: boolean }): Promise<JobRow> {
  const job = await markJobInvoiced(changes.tx, changes.companyId, locked.job.uuid, options);
  changes.after('job', job.uuid, toJobResponse({ ...locked, job }));
  return job;
}

/**
 * invoiceJob for an invoice create that writes the job's move in its own insert: the CTE to put in front of
 * the insert (named `invoiced_job`), and the job row it writes, recorded as the job's GET form after the change.
 */
export function invoiceJobWith(changes: Changes, locked: JobWithRelations, options: { paid: boolean }): { cte: SQL; name: string; job: JobRow } {
  const now = new Date();
  const job = invoicedJobRow(locked.job, options, now);
  changes.after('job', job.uuid, toJobResponse({ ...locked, job }));
  return { cte: invoicedJobCte(changes.companyId, locked.job.uuid, options, now), name: 'invoiced_job', job };
}
