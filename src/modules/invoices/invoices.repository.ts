import { and, eq, getTableColumns, sql, sum, type SQL } from 'drizzle-orm';
import { assertRecordedWrite } from '../../shared/recorded-writes.js';
import { executePrepared, prepared } from '../../db/perf/prepared.js';
import type { Db } from '../../db/client.js';
import { customers, estimates, invoices, jobs, locations, payments } from '../../db/schema/index.js';
import { pageOffset } from '../../shared/list-query.js';
import { byUuid, byUuidPlaceholders, countRows, findRow, insertRow, insertRowWith, listOrder, paginate, scoped, searchMatches, syncFilter, updateRow } from '../../shared/tenant-table.js';
import { DEFAULT_TIMEZONE, type InvoiceStatus, type StoredInvoiceStatus } from './invoice-status.js';
import type { ListInvoicesQuery } from './invoices.schemas.js';

/**
 * The business day of an invoice: today in the timezone of its location, else the company's primary
 * location, else America/New_York. The same rule as issue_date's default (see businessToday).
 */
const invoiceToday: SQL = sql`(now() at time zone coalesce(
  (select l.timezone from locations l where l.company_id = ${invoices.companyId} and l.uuid = ${invoices.locationUuid}),
  (select p.timezone from locations p where p.company_id = ${invoices.companyId} and p.is_primary and p.deleted_at is null),
  ${DEFAULT_TIMEZONE}))::date`;

/** The status as read and filtered: a Pending invoice past its due date with a balance reads Overdue. */
export const invoiceReadStatus: SQL<InvoiceStatus> = sql<InvoiceStatus>`(case
  when ${invoices.status} = 'Pending' and ${invoices.balanceAmount} > 0 and ${invoices.dueDate} < ${invoiceToday}
  then 'Overdue' else ${invoices.status} end)`;

/** The status an invoice being inserted reads as, for the insert's RETURNING list (`shown_status`). */
export const insertedInvoiceStatus: SQL = sql`${invoiceReadStatus} as shown_status`;

export type InvoiceRow = typeof invoices.$inferSelect & { status: StoredInvoiceStatus };
export type InvoiceInsert = typeof invoices.$inferInsert;

const listColumns = {
  invoice: invoices,
  shownStatus: invoiceReadStatus,
  customer: { uuid: customers.uuid, firstName: customers.firstName, lastName: customers.lastName },
};

const detailColumns = {
  ...listColumns,
  customer: { ...listColumns.customer, email: customers.email },
  job: { uuid: jobs.uuid, title: jobs.title, status: jobs.status },
  estimate: { uuid: estimates.uuid, estimateNumber: estimates.estimateNumber, status: estimates.status },
  location: { uuid: locations.uuid, name: locations.name },
};

const customerOfInvoice = and(eq(customers.companyId, invoices.companyId), eq(customers.uuid, invoices.customerUuid));

/** The invoice with what its GET embeds; `extra` columns besides (a settling payment's content digest). */
function detailQuery<Extra extends Record<string, SQL>>(db: Db, includeDeleted: boolean, extra: Extra = {} as Extra) {
  return db
    .select({ ...detailColumns, ...extra })
    .from(invoices)
    .innerJoin(customers, customerOfInvoice)
    .leftJoin(jobs, and(eq(jobs.companyId, invoices.companyId), eq(jobs.uuid, invoices.jobUuid)))
    .leftJoin(estimates, and(eq(estimates.companyId, invoices.companyId), eq(estimates.uuid, invoices.estimateUuid)))
    .leftJoin(locations, and(eq(locations.companyId, invoices.companyId), eq(locations.uuid, invoices.locationUuid)))
    .where(byUuidPlaceholders(invoices, includeDeleted))
    .limit(1);
}
type DetailRow = Awaited<ReturnType<typeof detailQuery<Record<never, SQL>>>>[number];

/** The invoice with its customer, job, estimate and location, in one query. */
export async function findInvoiceDetail(db: Db, companyId: string, uuid: string, includeDeleted = false) {
  const statement = prepared(db, `invoice_detail_${includeDeleted ? 'any' : 'live'}`, () => detailQuery(db, includeDeleted));
  const rows = (await statement.execute({ companyId, uuid })) as DetailRow[];
  return rows[0] ?? null;
}
export type InvoiceDetailRow = DetailRow;

/**
 * A digest of what an invoice holds besides what settlement writes (paid_amount, balance_amount, updated_at)
 * and what is derived (search_text): equal digests mean the invoice changed by settlements only.
 */
const invoiceContent: SQL<string> = sql<string>`md5(row(${sql.join(
  Object.values(getTableColumns(invoices))
    .filter((column) => ![invoices.paidAmount, invoices.balanceAmount, invoices.updatedAt, invoices.searchText].includes(column as never))
    .map((column) => sql`${column}`),
  sql`, `,
)})::text)`;

/** findInvoiceDetail with the invoice's content digest (invoiceContent), unlocked: what a settling payment is built on. */
export async function findInvoiceDetailWithContent(db: Db, companyId: string, uuid: string) {
  const statement = prepared(db, 'invoice_detail_live_content', () => detailQuery(db, false, { content: invoiceContent }));
  const rows = (await statement.execute({ companyId, uuid })) as Array<InvoiceDetailRow & { invoice: InvoiceRow; content: string }>;
  return rows[0] ?? null;
}

/**
 * A payment's settlement of a Pending invoice that stays Pending, as the data-modifying CTE `settled` of the
 * payment's own statement: `added` (a numeric placeholder) is added to paid_amount and taken from the
 * balance of the row as it is when the statement locks it, so concurrent payments wait on the row for one
 * statement each, not for a transaction. It writes only while the invoice is live, Pending, keeps a balance
 * above 0 (so it stays Pending and its job is not paid yet), reads as `shown` still and holds what the payment
 * was built on (invoiceContent = `content`). It answers the amounts after and before as JSON numbers.
 */
export function settlingPaymentCte(): SQL {
  const [companyId, uuid] = [sql.placeholder('settleCompany'), sql.placeholder('settleInvoice')];
  const [added, updatedAt, shown, content] = ['settleAdded', 'settleAt', 'settleShown', 'settleContent'].map((name) => sql`${sql.placeholder(name)}`);
  const column = (name: string) => sql.identifier(name);
  return sql`settled as (update ${invoices} set ${column(invoices.paidAmount.name)} = ${invoices.paidAmount} + ${added}::numeric,
      ${column(invoices.balanceAmount.name)} = ${invoices.balanceAmount} - ${added}::numeric,
      ${column(invoices.updatedAt.name)} = ${updatedAt}::timestamptz
    where ${byUuid(invoices, companyId, uuid)} and ${invoices.status} = 'Pending' and ${invoices.balanceAmount} > ${added}::numeric
      and ${invoiceReadStatus} = ${shown}::text and ${invoiceContent} = ${content}::text
    returning trim_scale(${invoices.paidAmount})::text as paid, trim_scale(${invoices.balanceAmount})::text as balance,
      trim_scale(${invoices.paidAmount} - ${added}::numeric)::text as paid_before,
      trim_scale(${invoices.balanceAmount} + ${added}::numeric)::text as balance_before)`;
}

/** The values of settlingPaymentCte's placeholders. */
export function settlingPaymentParams(values: { companyId: string; uuid: string; added: string; updatedAt: Date; shown: InvoiceStatus; content: string }) {
  return {
    settleCompany: values.companyId,
    settleInvoice: values.uuid,
    settleAdded: values.added,
    settleAt: values.updatedAt.toISOString(),
    settleShown: values.shown,
    settleContent: values.content,
  };
}

/** findInvoiceDetail with the invoice row locked until the transaction ends: the lock and the read in one statement. */
export async function lockInvoiceDetail(tx: Db, companyId: string, uuid: string, includeDeleted = false) {
  const statement = prepared(tx, `invoice_detail_${includeDeleted ? 'any' : 'live'}_for_update`, () =>
    detailQuery(tx, includeDeleted).for('update', { of: invoices }),
  );
  const rows = (await statement.execute({ companyId, uuid })) as Array<InvoiceDetailRow & { invoice: InvoiceRow }>;
  return rows[0] ?? null;
}

function listFilters(query: ListInvoicesQuery): Array<SQL | undefined> {
  return [
    query.status === 'All' ? undefined : sql`${invoiceReadStatus} = ${query.status}`,
    query.customer_uuid ? eq(invoices.customerUuid, query.customer_uuid) : undefined,
    query.job_uuid ? eq(invoices.jobUuid, query.job_uuid) : undefined,
    searchMatches(invoices.searchText, query.search),
    syncFilter(invoices, query),
  ];
}

function listWhere(companyId: string, query: ListInvoicesQuery) {
  const filters = listFilters(query);
  return { filters, where: and(scoped(invoices, companyId, query.include_deleted), ...filters) };
}

export function listInvoices(db: Db, companyId: string, query: ListInvoicesQuery) {
  const { filters, where } = listWhere(companyId, query);
  return paginate(
    query,
    (offset, limit) =>
      db
        .select(listColumns)
        .from(invoices)
        .innerJoin(customers, customerOfInvoice)
        .where(where)
        .orderBy(...listOrder(invoices, query))
        .limit(limit)
        .offset(offset),
    () => countRows(db, invoices, companyId, query.include_deleted, filters),
  );
}

/** How many line items the page `query` asks for holds, counted in PostgreSQL without reading them out. */
export async function pageLineItems(db: Db, companyId: string, query: ListInvoicesQuery): Promise<number> {
  const { where } = listWhere(companyId, query);
  const lines = sql<number>`jsonb_array_length(coalesce(${invoices.lineItems}, '[]'::jsonb))`.as('lines');
  const page = db.select({ lines }).from(invoices).innerJoin(customers, customerOfInvoice).where(where);
  const rows = page.orderBy(...listOrder(invoices, query)).limit(query.limit).offset(pageOffset(query)).as('page');
  const [weight] = await db.select({ lines: sql<number>`coalesce(sum(${rows.lines}), 0)::int` }).from(rows);
  return weight?.lines ?? 0;
}
export type InvoiceListRow = Awaited<ReturnType<typeof listInvoices>>['items'][number];

/** Locks the invoice row until the transaction ends: every change to its balance goes through this. */
export async function lockInvoice(tx: Db, companyId: string, uuid: string, includeDeleted = false) {
  return (await findRow(tx, invoices, companyId, uuid, { includeDeleted, lock: true })) as InvoiceRow | null;
}

/** The status the invoice reads as (Overdue derived). */
export function findShownStatus(db: Db, companyId: string, uuid: string) {
  return db
    .select({ shownStatus: invoiceReadStatus })
    .from(invoices)
    .where(byUuid(invoices, companyId, uuid))
    .limit(1)
    .then((rows) => rows[0]?.shownStatus ?? null);
}

/** Inserts an invoice; answers the row as written with the status it reads as. */
export async function insertInvoice(db: Db, values: InvoiceInsert): Promise<{ invoice: InvoiceRow; shownStatus: InvoiceStatus }> {
  const { shownStatus, ...invoice } = await insertRow(db, invoices, values, { shownStatus: invoiceReadStatus });
  return { invoice: invoice as InvoiceRow, shownStatus: shownStatus as InvoiceStatus };
}

/**
 * insertInvoice behind a data-modifying CTE that writes what the invoice changes elsewhere (its job,
 * invoicedJobCte): one statement. Answers the row, the status it reads as, and how many rows the CTE wrote
 * (its `done` column counted).
 */
export async function insertInvoiceWith(db: Db, values: InvoiceInsert, cte: SQL, cteName: string) {
  const { row, extras } = await insertRowWith(db, invoices, values, cte, {
    shown: invoiceReadStatus,
    written: sql`(select count(*)::int from ${sql.identifier(cteName)})`,
  });
  return { invoice: row as InvoiceRow, shownStatus: extras.shown as InvoiceStatus, written: Number(extras.written) };
}

export async function updateInvoice(db: Db, companyId: string, uuid: string, values: Partial<InvoiceInsert>) {
  await updateRow(db, invoices, companyId, uuid, values, { includeDeleted: true });
}

/** The amounts and status settlement writes (invoice-settlement.ts). */
export type SettlementColumns = Pick<InvoiceInsert, 'paidAmount' | 'balanceAmount' | 'status'>;

/** A settlement with the updated_at it stamps (a payment create writes it with its payment). */
export type SettlementWrite = SettlementColumns & { updatedAt: Date };

/**
 * The settlement of one invoice as a data-modifying CTE named `settled`, answering the status the invoice
 * reads as afterwards (`shown_status`): a statement that writes something else puts it in front of itself
 * and reads `(select shown_status from settled)`, so both writes go in one round trip.
 */
export function settlementCte(companyId: string, uuid: string, values: SettlementWrite): SQL {
  return sql`settled as (update ${invoices} set ${sql.identifier(invoices.paidAmount.name)} = ${values.paidAmount}::numeric,
    ${sql.identifier(invoices.balanceAmount.name)} = ${values.balanceAmount}::numeric, ${sql.identifier(invoices.status.name)} = ${values.status},
    ${sql.identifier(invoices.updatedAt.name)} = ${values.updatedAt.toISOString()}::timestamptz
    where ${byUuid(invoices, companyId, uuid, true)} returning ${invoiceReadStatus} as shown_status)`;
}

/** Writes a settled invoice's amounts and status; answers the row as written with the status it reads as. */
export async function writeSettlement(db: Db, companyId: string, uuid: string, values: SettlementColumns) {
  assertRecordedWrite(db, invoices);
  const statement = prepared(db, 'settle_invoice', () =>
    db
      .update(invoices)
      .set({
        paidAmount: sql`${sql.placeholder('paidAmount')}::numeric`,
        balanceAmount: sql`${sql.placeholder('balanceAmount')}::numeric`,
        status: sql`${sql.placeholder('status')}`,
        updatedAt: sql`${sql.placeholder('updatedAt')}::timestamptz`,
      })
      .where(byUuidPlaceholders(invoices, true))
      .returning({ ...getTableColumns(invoices), shownStatus: invoiceReadStatus }),
  );
  const [row] = (await statement.execute({ ...values, companyId, uuid, updatedAt: new Date().toISOString() })) as Array<
    InvoiceRow & { shownStatus: InvoiceStatus }
  >;
  if (!row) return null;
  const { shownStatus, ...invoice } = row;
  return { invoice: invoice as InvoiceRow, shownStatus };
}

/** Sum of the invoice's live Completed payments, as a numeric(12,2) string. */
export async function sumCompletedPayments(db: Db, companyId: string, invoiceUuid: string): Promise<string> {
  const [row] = await db
    .select({ paid: sum(payments.amount) })
    .from(payments)
    .where(and(scoped(payments, companyId), eq(payments.invoiceUuid, invoiceUuid), eq(payments.status, 'Completed')));
  return row?.paid ?? '0';
}

/** A live job's billable amounts; null when it is not a live job of the company. */
export async function findJobAmounts(db: Db, companyId: string, uuid: string) {
  const statement = prepared(db, 'job_amounts', () =>
    db
      .select({ actualAmount: jobs.actualAmount, estimatedAmount: jobs.estimatedAmount, customerUuid: jobs.customerUuid })
      .from(jobs)
      .where(byUuidPlaceholders(jobs, false))
      .limit(1),
  );
  const rows = (await statement.execute({ companyId, uuid })) as Array<{ actualAmount: string | null; estimatedAmount: string | null; customerUuid: string }>;
  return rows[0] ?? null;
}

export interface EstimateAmounts {
  uuid: string;
  customerUuid: string;
  estimateNumber: string | null;
  status: (typeof estimates.$inferSelect)['status'];
  baseAmount: string;
  addonsAmount: string;
  taxAmount: string;
}

/** A live estimate's amounts and what an invoice embeds of it; null when it is not a live estimate of the company. */
export async function findEstimateAmounts(db: Db, companyId: string, uuid: string) {
  const statement = prepared(db, 'estimate_amounts', () =>
    db
      .select({
        uuid: estimates.uuid,
        customerUuid: estimates.customerUuid,
        estimateNumber: estimates.estimateNumber,
        status: estimates.status,
        baseAmount: estimates.baseAmount,
        addonsAmount: estimates.addonsAmount,
        taxAmount: estimates.taxAmount,
      })
      .from(estimates)
      .where(byUuidPlaceholders(estimates, false))
      .limit(1),
  );
  const rows = (await statement.execute({ companyId, uuid })) as Array<EstimateAmounts>;
  return rows[0] ?? null;
}

/** The customer and location an invoice create names, as its GET embeds them, and the timezone of its business day. */
export interface InvoiceParties {
  /** Null when customer_uuid is not a live customer of the company. */
  customer: { uuid: string; firstName: string; lastName: string; email: string | null } | null;
  /** Null when no location_uuid was given or it is not a live location of the company. */
  location: { uuid: string; name: string } | null;
  /** The location's timezone, else the company's primary location's, else America/New_York. */
  timezone: string;
}

/** The parties of an invoice create in one statement (see InvoiceParties). */
export async function findInvoiceParties(db: Db, companyId: string, customerUuid: string, locationUuid: string | null): Promise<InvoiceParties> {
  const company = sql`${sql.placeholder('companyId')}::uuid`;
  const [row] = await executePrepared<{
    customer_uuid: string | null;
    first_name: string;
    last_name: string;
    email: string | null;
    location_uuid: string | null;
    location_name: string;
    timezone: string;
  }>(
    db,
    'invoice_parties',
    () => sql`
      select c.uuid as customer_uuid, c.first_name, c.last_name, c.email, l.uuid as location_uuid, l.name as location_name,
        coalesce(l.timezone, (select p.timezone from locations p
          where p.company_id = ${company} and p.is_primary and p.deleted_at is null limit 1), ${DEFAULT_TIMEZONE}) as timezone
      from (select 1) as one
      left join customers c on c.company_id = ${company} and c.uuid = ${sql.placeholder('customerUuid')}::uuid and c.deleted_at is null
      left join locations l on l.company_id = ${company} and l.uuid = ${sql.placeholder('locationUuid')}::uuid and l.deleted_at is null`,
    { companyId, customerUuid, locationUuid },
  );
  return {
    customer: row.customer_uuid === null ? null : { uuid: row.customer_uuid, firstName: row.first_name, lastName: row.last_name, email: row.email },
    location: row.location_uuid === null ? null : { uuid: row.location_uuid, name: row.location_name },
    timezone: row.timezone,
  };
}
