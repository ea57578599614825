import type { Db } from '../../db/client.js';
import { toJobResponse } from './jobs.mapper.js';
import { sql, type SQL } from 'drizzle-orm';
import { updatedEvent, type Changes } from '../changes/change-recorder.js';
import type { NewEvent } from '../changes/changes.repository.js';
import {
  findJobWithRelations,
  invoicedJobCte,
  invoicedJobRow,
  jobAsReadCte,
  lockJobWithRelations,
  markJobInvoiced,
  type JobRow,
  type JobWithRelations,
  type VersionedJob,
} from './jobs.repository.js';

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
  const values = { companyId: sql`${changes.companyId}`, jobUuid: sql`${locked.job.uuid}`, paid: sql`${options.paid}`, at: sql`${now.toISOString()}` };
  return { cte: invoicedJobCte(values), name: 'invoiced_job', job };
}

/** The job an invoice create bills, read without a lock, with its version: what a one-statement create is built on. */
export function readJobForInvoice(db: Db, companyId: string, uuid: string): Promise<VersionedJob | null> {
  return findJobWithRelations(db, companyId, uuid);
}

/**
 * The job's move to Invoiced in a one-statement invoice create (createCheckedRecord): `before` locks the job
 * and yields a row only while it is still the version read, `after` moves it once the invoice is inserted,
 * and `event` is its job.updated event, built from the row read and the row the move writes. The job row
 * written is answered for the invoice's embed.
 */
export function invoicedJobInStatement(
  read: VersionedJob,
  options: { paid: boolean },
  now: Date,
): { before: SQL; after: SQL; params: Record<string, unknown>; event: NewEvent | null; job: JobRow } {
  const job = invoicedJobRow(read.job, options, now);
  const placeholder = (name: string) => sql`${sql.placeholder(name)}`;
  return {
    before: jobAsReadCte(),
    after: invoicedJobCte(
      { companyId: placeholder('jobCompany'), jobUuid: placeholder('jobUuid'), paid: placeholder('jobPaid'), at: placeholder('jobAt') },
      sql`exists (select 1 from inserted)`,
    ),
    params: { jobCompany: read.job.companyId, jobUuid: read.job.uuid, jobVersion: read.version, jobPaid: options.paid, jobAt: now.toISOString() },
    event: updatedEvent(read.job.companyId, 'job', read.job.uuid, toJobResponse(read), toJobResponse({ ...read, job })),
    job,
  };
}
