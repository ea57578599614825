import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { customers, invoices, payments, type PaymentStatus } from '../../db/schema/index.js';
import { byUuidPlaceholders, countRows, findRow, insertRow, insertRowWith, listOrder, paginate, scoped, softDelete, syncFilter, updateRow } from '../../shared/tenant-table.js';
import { bucketCondition } from '../../db/perf/record-counts.js';
import { prepared } from '../../db/perf/prepared.js';
import { invoiceReadStatus, settlementCte, type SettlementWrite } from '../invoices/invoices.repository.js';
import type { InvoiceStatus } from '../invoices/invoice-status.js';
import type { ListPaymentsQuery } from './payments.schemas.js';

export type PaymentRow = typeof payments.$inferSelect & { status: PaymentStatus };
export type PaymentInsert = typeof payments.$inferInsert;

const invoiceOfPayment = and(eq(invoices.companyId, payments.companyId), eq(invoices.uuid, payments.invoiceUuid));

const listColumns = {
  payment: payments,
  invoice: { uuid: invoices.uuid, invoiceNumber: invoices.invoiceNumber },
};

const detailColumns = {
  payment: payments,
  invoice: {
    ...listColumns.invoice,
    totalAmount: invoices.totalAmount,
    balanceAmount: invoices.balanceAmount,
    shownStatus: invoiceReadStatus,
  },
  customer: { uuid: customers.uuid, firstName: customers.firstName, lastName: customers.lastName },
};

export async function findPayment(db: Db, companyId: string, uuid: string) {
  return (await findRow(db, payments, companyId, uuid)) as PaymentRow | null;
}

function detailQuery(db: Db, includeDeleted: boolean) {
  return db
    .select(detailColumns)
    .from(payments)
    .innerJoin(invoices, invoiceOfPayment)
    .innerJoin(customers, and(eq(customers.companyId, payments.companyId), eq(customers.uuid, payments.customerUuid)))
    .where(byUuidPlaceholders(payments, includeDeleted))
    .limit(1);
}
export type PaymentDetailRow = Awaited<ReturnType<typeof detailQuery>>[number];

/** The payment with its invoice and customer, in one query. */
export async function findPaymentDetail(db: Db, companyId: string, uuid: string, includeDeleted = false) {
  const statement = prepared(db, `payment_detail_${includeDeleted ? 'any' : 'live'}`, () => detailQuery(db, includeDeleted));
  const rows = (await statement.execute({ companyId, uuid })) as PaymentDetailRow[];
  return rows[0] ?? null;
}

function listFilters(query: ListPaymentsQuery): Array<SQL | undefined> {
  return [
    query.invoice_uuid ? eq(payments.invoiceUuid, query.invoice_uuid) : undefined,
    query.customer_uuid ? eq(payments.customerUuid, query.customer_uuid) : undefined,
    query.payment_type ? eq(payments.paymentType, query.payment_type) : undefined,
    syncFilter(payments, query),
  ];
}

export function listPayments(db: Db, companyId: string, query: ListPaymentsQuery) {
  const filters = listFilters(query);
  const bucket = query.status ? { column: payments.status, values: [query.status] } : undefined;
  const where = and(scoped(payments, companyId, query.include_deleted), ...filters, bucketCondition(bucket));
  return paginate(
    query,
    (offset, limit) =>
      db
        .select(listColumns)
        .from(payments)
        .innerJoin(invoices, invoiceOfPayment)
        .where(where)
        .orderBy(...listOrder(payments, query))
        .limit(limit)
        .offset(offset),
    () => countRows(db, payments, companyId, query.include_deleted, filters, bucket),
  );
}
export type PaymentListRow = Awaited<ReturnType<typeof listPayments>>['items'][number];

export async function insertPayment(db: Db, values: PaymentInsert): Promise<PaymentRow> {
  return (await insertRow(db, payments, values)) as PaymentRow;
}

/**
 * Inserts a payment and, when `settlement` is given, writes its invoice's settlement in the same statement
 * (settlementCte): one round trip while the invoice is locked. Answers the payment row and the status the
 * invoice reads as after the settlement (null without one).
 */
export async function insertPaymentSettling(
  db: Db,
  values: PaymentInsert,
  settlement: SettlementWrite | null,
): Promise<{ row: PaymentRow; shownStatus: InvoiceStatus | null }> {
  if (!settlement) return { row: await insertPayment(db, values), shownStatus: null };
  const { row, extras } = await insertRowWith(db, payments, values, settlementCte(values.companyId, values.invoiceUuid, settlement), {
    shown: sql`(select shown_status from settled)`,
  });
  return { row: row as PaymentRow, shownStatus: extras.shown as InvoiceStatus };
}

export async function updatePayment(db: Db, companyId: string, uuid: string, values: Partial<PaymentInsert>) {
  await updateRow(db, payments, companyId, uuid, values);
}

export function softDeletePayment(db: Db, companyId: string, uuid: string) {
  return softDelete(db, payments, companyId, uuid);
}
