import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { customers, estimates, invoices, jobs, locations, users } from '../../db/schema/index.js';
import { byUuidPlaceholders, countRows, findRow, insertRow, listOrder, paginate, scoped, searchMatches, syncFilter, updateRow } from '../../shared/tenant-table.js';
import { bucketCondition } from '../../db/perf/record-counts.js';
import { prepared } from '../../db/perf/prepared.js';
import { assertRecordedWrite } from '../../shared/recorded-writes.js';
import type { ListJobsQuery } from './jobs.schemas.js';

export type JobRow = typeof jobs.$inferSelect;
export type JobInsert = typeof jobs.$inferInsert;

const customerColumns = {
  uuid: customers.uuid,
  firstName: customers.firstName,
  lastName: customers.lastName,
  companyName: customers.companyName,
  email: customers.email,
  phone: customers.phone,
};
export type JobCustomerRow = { [K in keyof typeof customerColumns]: (typeof customers.$inferSelect)[K] };

/** The customer belongs to the job's company: join on both key columns. */
const customerOfJob = and(eq(customers.companyId, jobs.companyId), eq(customers.uuid, jobs.customerUuid));

export interface JobWithCustomer {
  job: JobRow;
  customer: JobCustomerRow;
}

export interface JobWithRelations extends JobWithCustomer {
  location: { uuid: string; name: string } | null;
  assignedUser: { id: string; firstName: string; lastName: string } | null;
}

/** One job with its customer, location and assigned user, in one query. */
export function findJobWithRelations(db: Db, companyId: string, uuid: string, includeDeleted = false): Promise<VersionedJob | null> {
  return selectJobWithRelations(db, companyId, uuid, includeDeleted, false);
}

/** A job with its relations and its row's version (xmin): any other write of the row gives it another. */
export type VersionedJob = JobWithRelations & { version: string };

/** findJobWithRelations with the job row locked until the transaction ends: the lock and the read in one statement. */
export function lockJobWithRelations(db: Db, companyId: string, uuid: string, includeDeleted = false): Promise<JobWithRelations | null> {
  return selectJobWithRelations(db, companyId, uuid, includeDeleted, true);
}

async function selectJobWithRelations(
  db: Db,
  companyId: string,
  uuid: string,
  includeDeleted: boolean,
  lock: boolean,
): Promise<VersionedJob | null> {
  const select = () =>
    db
      .select({
        job: jobs,
        customer: customerColumns,
        locationUuid: locations.uuid,
        locationName: locations.name,
        userId: users.uuid,
        userFirstName: users.firstName,
        userLastName: users.lastName,
        version: sql<string>`${jobs}.xmin::text`,
      })
      .from(jobs)
      .innerJoin(customers, customerOfJob)
      .leftJoin(locations, and(eq(locations.companyId, jobs.companyId), eq(locations.uuid, jobs.locationUuid)))
      .leftJoin(users, and(eq(users.companyId, jobs.companyId), eq(users.uuid, jobs.assignedToUserId)))
      .where(byUuidPlaceholders(jobs, includeDeleted))
      .limit(1);
  type Row = Awaited<ReturnType<typeof select>>[number];
  const name = `find_job_with_relations_${includeDeleted ? 'any' : 'live'}${lock ? '_for_update' : ''}`;
  const statement = prepared(db, name, () => (lock ? select().for('update', { of: jobs }) : select()));
  const rows = (await statement.execute({ companyId, uuid })) as Row[];
  const row = rows[0];
  if (!row) return null;
  return {
    version: row.version,
    job: row.job,
    customer: row.customer,
    location: row.locationUuid && row.locationName !== null ? { uuid: row.locationUuid, name: row.locationName } : null,
    assignedUser:
      row.userId && row.userFirstName !== null && row.userLastName !== null
        ? { id: row.userId, firstName: row.userFirstName, lastName: row.userLastName }
        : null,
  };
}

/** The live job row, locked for the rest of the transaction (status timestamps are read-then-write). */
export function lockJob(db: Db, companyId: string, uuid: string): Promise<JobRow | null> {
  return findRow(db, jobs, companyId, uuid, { lock: true });
}

function listFilters(query: ListJobsQuery) {
  return [
    query.location_uuid ? eq(jobs.locationUuid, query.location_uuid) : undefined,
    query.customer_uuid ? eq(jobs.customerUuid, query.customer_uuid) : undefined,
    query.assigned_to_user_id ? eq(jobs.assignedToUserId, query.assigned_to_user_id) : undefined,
    query.priority ? eq(jobs.priority, query.priority) : undefined,
    searchMatches(jobs.searchText, query.search),
    syncFilter(jobs, query),
  ];
}

export function listJobs(db: Db, companyId: string, query: ListJobsQuery) {
  const filters = listFilters(query);
  const bucket = query.status ? { column: jobs.status, values: query.status } : undefined;
  const where = and(scoped(jobs, companyId, query.include_deleted), ...filters, bucketCondition(bucket));
  return paginate<JobWithCustomer>(
    query,
    (offset, limit) =>
      db
        .select({ job: jobs, customer: customerColumns })
        .from(jobs)
        .innerJoin(customers, customerOfJob)
        .where(where)
        .orderBy(...listOrder(jobs, query))
        .limit(limit)
        .offset(offset),
    () => countRows(db, jobs, companyId, query.include_deleted, filters, bucket),
  );
}

export function insertJob(db: Db, values: JobInsert): Promise<JobRow> {
  return insertRow(db, jobs, values);
}

export function updateJob(db: Db, companyId: string, uuid: string, values: Partial<JobInsert>) {
  return updateRow(db, jobs, companyId, uuid, values);
}

/** Whether a live invoice or estimate names the job (their customer is the job's: one customer per document). */
export async function jobHasDocuments(db: Db, companyId: string, jobUuid: string): Promise<boolean> {
  const of = (table: typeof invoices | typeof estimates) =>
    sql`exists (select 1 from ${table} where ${table.companyId} = ${companyId} and ${table.jobUuid} = ${jobUuid} and ${table.deletedAt} is null)`;
  const result = await db.execute(sql`select (${of(invoices)} or ${of(estimates)}) as has`);
  return Boolean((result as unknown as { rows: Array<{ has: boolean }> }).rows[0]?.has);
}

/** Whether the job exists, is the company's and is not deleted. */
export async function liveJobExists(db: Db, companyId: string, uuid: string): Promise<boolean> {
  return (await findRow(db, jobs, companyId, uuid)) !== null;
}

/** The job's key and the time of the change, as placeholders (markJobInvoiced, markJobPaid). */
const jobAtNow = { job: and(eq(jobs.companyId, sql.placeholder('companyId')), eq(jobs.uuid, sql.placeholder('uuid'))), now: sql`${sql.placeholder('now')}::timestamptz` };

/**
 * Creating an invoice moves its job to Invoiced (stamping invoiced_at once, and paid_at once when the invoice
 * is already Paid). Answers the row as written.
 */
export async function markJobInvoiced(db: Db, companyId: string, jobUuid: string, options: { paid: boolean }, now = new Date()): Promise<JobRow> {
  assertRecordedWrite(db, jobs);
  const statement = prepared(db, 'mark_job_invoiced', () =>
    db
      .update(jobs)
      .set({
        status: 'Invoiced',
        invoicedAt: sql`coalesce(${jobs.invoicedAt}, ${jobAtNow.now})`,
        paidAt: sql`case when ${sql.placeholder('paid')}::boolean then coalesce(${jobs.paidAt}, ${jobAtNow.now}) else ${jobs.paidAt} end`,
        updatedAt: jobAtNow.now,
      })
      .where(jobAtNow.job)
      .returning(),
  );
  const [row] = (await statement.execute({ companyId, uuid: jobUuid, now: now.toISOString(), paid: options.paid })) as JobRow[];
  return row;
}

/**
 * markJobInvoiced as a data-modifying CTE named `invoiced_job` (answering `done` per row written), for the
 * invoice's insert to put in front of itself: the job moves with its invoice in one statement. The values
 * are given as SQL (bound values, or placeholders of a prepared statement); `when` limits the write (a
 * statement that writes the job only with its invoice).
 */
export function invoicedJobCte(values: { companyId: SQL; jobUuid: SQL; paid: SQL; at: SQL }, when?: SQL): SQL {
  const at = sql`${values.at}::timestamptz`;
  const column = (name: string) => sql.identifier(name);
  return sql`invoiced_job as (update ${jobs} set ${column(jobs.status.name)} = 'Invoiced',
    ${column(jobs.invoicedAt.name)} = coalesce(${jobs.invoicedAt}, ${at}),
    ${column(jobs.paidAt.name)} = case when ${values.paid}::boolean then coalesce(${jobs.paidAt}, ${at}) else ${jobs.paidAt} end,
    ${column(jobs.updatedAt.name)} = ${at}
    where ${jobs.companyId} = ${values.companyId}::uuid and ${jobs.uuid} = ${values.jobUuid}::uuid${when ? sql` and ${when}` : sql``} returning 1 as done)`;
}

/**
 * The job a one-statement invoice create bills, still the version it read (`jobVersion`), locked for the
 * statement: the CTE `job_ready`, which yields a row only then.
 */
export function jobAsReadCte(): SQL {
  return sql`job_ready as (select 1 from ${jobs} where ${jobs.companyId} = ${sql.placeholder('jobCompany')}::uuid
    and ${jobs.uuid} = ${sql.placeholder('jobUuid')}::uuid and ${jobs.deletedAt} is null and xmin = ${sql.placeholder('jobVersion')}::xid
    for update)`;
}

/** The row invoicedJobCte writes, from the row locked before it: what markJobInvoiced would answer. */
export function invoicedJobRow(locked: JobRow, options: { paid: boolean }, now: Date): JobRow {
  return {
    ...locked,
    status: 'Invoiced',
    invoicedAt: locked.invoicedAt ?? now,
    paidAt: options.paid ? (locked.paidAt ?? now) : locked.paidAt,
    updatedAt: now,
  };
}

/** An invoice of the job became Paid: the job gets paid_at (once). */
export async function markJobPaid(db: Db, companyId: string, jobUuid: string, now = new Date()): Promise<void> {
  assertRecordedWrite(db, jobs);
  const statement = prepared(db, 'mark_job_paid', () =>
    db
      .update(jobs)
      .set({ paidAt: sql`coalesce(${jobs.paidAt}, ${jobAtNow.now})`, updatedAt: jobAtNow.now })
      .where(jobAtNow.job),
  );
  await statement.execute({ companyId, uuid: jobUuid, now: now.toISOString() });
}

/**
 * The customer of a live job of the company, or null: what the one-customer rule of a document's job is
 * checked against (DECISIONS §8). With `lock: 'share'` the job row is share-locked until the transaction
 * ends: a job update changing that customer waits for the document (invoice or estimate) that names the job,
 * then finds it (and one already under way is waited for, its new customer read). A preview, which writes
 * nothing, reads it without a lock.
 */
export async function findJobCustomer(db: Db, companyId: string, uuid: string, options: { lock?: 'share' } = {}): Promise<string | null> {
  const statement = options.lock
    ? prepared(db, 'job_customer_for_share', () =>
        db.select({ customerUuid: jobs.customerUuid }).from(jobs).where(byUuidPlaceholders(jobs, false)).limit(1).for('share', { of: jobs }),
      )
    : prepared(db, 'job_customer', () => db.select({ customerUuid: jobs.customerUuid }).from(jobs).where(byUuidPlaceholders(jobs, false)).limit(1));
  const rows = (await statement.execute({ companyId, uuid })) as Array<{ customerUuid: string }>;
  return rows[0]?.customerUuid ?? null;
}
