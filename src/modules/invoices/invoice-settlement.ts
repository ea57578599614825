import type { Db } from '../../db/client.js';
import { sql } from 'drizzle-orm';
import type { Changes } from '../changes/change-recorder.js';
import { newMark, type CreateGuard, type JsonMark, type NewEvent } from '../changes/changes.repository.js';
import { randomTimeOrderedId } from '../../shared/ids.js';
import { invalidField } from '../../errors.js';
import { centsToDecimal, fromCents, toCents, type Cents } from '../../shared/money.js';
import { markJobPaid } from '../jobs/jobs.repository.js';
import { settledStatus, type InvoiceStatus, type StoredInvoiceStatus } from './invoice-status.js';
import { toInvoiceResponse } from './invoices.mapper.js';
import type { InvoiceDetailRow } from './invoices.repository.js';
import * as repository from './invoices.repository.js';

export type LockedInvoice = repository.InvoiceRow;

/** Locks the invoice row for the rest of the transaction; every balance change starts here. */
export function lockInvoice(tx: Db, companyId: string, uuid: string, options: { includeDeleted?: boolean } = {}) {
  return repository.lockInvoice(tx, companyId, uuid, options.includeDeleted ?? false);
}

/**
 * Locks the invoice and reads its GET form in one statement, remembered as the record before the
 * change (see Changes.touched). Null when there is no such invoice.
 */
export async function lockInvoiceForChange(changes: Changes, uuid: string, options: { includeDeleted?: boolean } = {}) {
  const detail = await repository.lockInvoiceDetail(changes.tx, changes.companyId, uuid, options.includeDeleted ?? false);
  if (detail) changes.touched('invoice', uuid, toInvoiceResponse(detail));
  return detail;
}

/** The invoice after settlement: its row and the status it reads as. */
export interface SettledInvoice {
  invoice: LockedInvoice;
  shownStatus: InvoiceStatus;
}

/**
 * What settlement starts from: by default the sum of the invoice's live Completed payments, read under the
 * lock. A payment create passes `added`, the amount its new payment adds (0 unless Completed): every
 * payment write settles its invoice under this lock, so the stored paid_amount is that sum already and the
 * new one is known without reading every payment of the invoice again (a hot invoice has thousands).
 */
export interface SettlementInput {
  detail?: InvoiceDetailRow;
  added?: Cents;
}

/**
 * Recomputes a locked invoice from its payments: paid = live Completed payments, balance = total - paid,
 * a zero balance makes it Paid (its job gets paid_at), a rising balance returns a Paid invoice to
 * Pending. A payment write that would make paid exceed the total is refused (400) and rolled back.
 * `status` is the stored status to settle from (an update may have just requested one). Given the
 * invoice's `detail` as lockInvoiceForChange read it, its GET form after settlement is built from the
 * written row instead of read again (settlement changes none of its embedded objects), and the settled
 * invoice is answered.
 */
export async function settleInvoice(
  changes: Changes,
  invoice: LockedInvoice,
  status: StoredInvoiceStatus = invoice.status,
  { detail, added }: SettlementInput = {},
): Promise<SettledInvoice | null> {
  const { tx, companyId } = changes;
  const paid =
    added === undefined
      ? toCents(await repository.sumCompletedPayments(tx, companyId, invoice.uuid))
      : toCents(invoice.paidAmount) + added;
  const plan = planSettlement(invoice, status, paid);
  let settled: SettledInvoice | null = detail ? { invoice, shownStatus: detail.shownStatus } : null;
  if (plan.changed) {
    await changes.touch('invoice', invoice.uuid);
    settled = await repository.writeSettlement(tx, companyId, invoice.uuid, plan.columns);
  }
  await settled_(changes, invoice, plan, detail, settled);
  return settled;
}

/** What settling a locked invoice at `paid` (cents) writes; 400 when paid would exceed the total. */
export interface SettlementPlan {
  /** Whether the stored amounts or status change. */
  changed: boolean;
  columns: repository.SettlementColumns;
  /** The stored status after settlement. */
  status: StoredInvoiceStatus;
}

export function planSettlement(invoice: LockedInvoice, status: StoredInvoiceStatus, paid: Cents): SettlementPlan {
  const total = toCents(invoice.totalAmount);
  if (paid > total) {
    const balance = total - toCents(invoice.paidAmount);
    throw invalidField('amount', `would make paid_amount exceed total_amount (the balance is ${fromCents(balance)})`, 'out_of_range');
  }
  const balance = total - paid;
  const nextStatus = settledStatus(status, balance);
  const changed =
    nextStatus !== invoice.status || paid !== toCents(invoice.paidAmount) || balance !== toCents(invoice.balanceAmount);
  return { changed, status: nextStatus, columns: { paidAmount: centsToDecimal(paid), balanceAmount: centsToDecimal(balance), status: nextStatus } };
}

/**
 * A payment create's settlement: the payment's amount (0 unless Completed) added to the invoice, locked and
 * read by lockInvoiceForChange as `detail`. The payment row and the settled invoice are written by one
 * statement (the insert, with the invoice's update in the same statement), so the invoice stays locked for
 * one round trip less. Answers the payment row as written and the settled invoice.
 */
export async function insertWithSettlement<P>(
  changes: Changes,
  detail: InvoiceDetailRow & { invoice: LockedInvoice },
  added: Cents,
  insert: (settlement: repository.SettlementWrite | null) => Promise<{ row: P; shownStatus: InvoiceStatus | null }>,
): Promise<{ row: P; settled: SettledInvoice }> {
  const { invoice } = detail;
  const plan = planSettlement(invoice, invoice.status, toCents(invoice.paidAmount) + added);
  // The settled row is the locked one with what the statement writes: no need to read it back.
  const settlement = plan.changed ? { ...plan.columns, updatedAt: new Date() } : null;
  const written = await insert(settlement);
  if (settlement && written.shownStatus === null) throw new Error(`The invoice ${invoice.uuid} was not settled`);
  const settled: SettledInvoice = settlement
    ? { invoice: { ...invoice, ...settlement, status: plan.status }, shownStatus: written.shownStatus! }
    : { invoice, shownStatus: detail.shownStatus };
  await settled_(changes, invoice, plan, detail, settled);
  return { row: written.row, settled };
}

/** After the settlement is written: the invoice's GET form for its event, and its job paid when it became Paid. */
async function settled_(
  changes: Changes,
  invoice: LockedInvoice,
  plan: SettlementPlan,
  detail: InvoiceDetailRow | undefined,
  settled: SettledInvoice | null,
): Promise<void> {
  if (detail && settled) changes.after('invoice', invoice.uuid, toInvoiceResponse({ ...detail, ...settled }));
  const nextStatus = plan.status;
  if (nextStatus === 'Paid' && invoice.status !== 'Paid' && invoice.jobUuid) {
    await changes.touch('job', invoice.jobUuid);
    await markJobPaid(changes.tx, changes.companyId, invoice.jobUuid);
  }
}

/** An invoice as a settling payment reads it (findInvoiceDetailWithContent): unlocked, with its content digest. */
export type InvoiceToSettle = NonNullable<Awaited<ReturnType<typeof repository.findInvoiceDetailWithContent>>>;

/** Reads the live invoice a payment may settle in its own statement (settlingGuard); null when there is none. */
export function readInvoiceToSettle(db: Db, companyId: string, uuid: string): Promise<InvoiceToSettle | null> {
  return repository.findInvoiceDetailWithContent(db, companyId, uuid);
}

/** Whether a payment adding `added` cents (more than 0) can settle `read`, a live invoice, in its own statement: it stays Pending with a balance. */
export function settlesInStatement(read: InvoiceToSettle, added: Cents): boolean {
  return read.invoice.status === 'Pending' && toCents(read.invoice.balanceAmount) > added;
}

/**
 * What a payment create's statement (createCheckedRecord) adds around the payment's row to settle its invoice
 * in the same statement (settlingPaymentCte): the invoice's amounts are the row's as the statement locks it,
 * so they are marks in the JSON until the statement fills them in: `balance` in the invoice the payment
 * embeds, the invoice's amounts and their previous values in its invoice.updated event, recorded after the
 * payment's. Written only while the invoice is as `read` but for other payments' settlements; else nothing is
 * written and the payment takes the transaction path, which refuses or settles it as the rules say.
 */
export function settlingGuard(read: InvoiceToSettle, added: Cents, now: Date): { guard: CreateGuard; balance: JsonMark } {
  const { invoice } = read;
  const settledValue = (column: string) => sql`(select ${sql.identifier(column)} from settled)`;
  const [paid, balance, paidBefore, balanceBefore] = [
    newMark('paid', settledValue('paid')),
    newMark('balance', settledValue('balance')),
    newMark('paid_before', settledValue('paid_before')),
    newMark('balance_before', settledValue('balance_before')),
  ];
  const after = toInvoiceResponse({ ...read, invoice: { ...invoice, updatedAt: now } });
  const event: NewEvent = {
    companyId: invoice.companyId,
    uuid: randomTimeOrderedId(),
    type: 'invoice.updated',
    objectType: 'invoice',
    objectUuid: invoice.uuid,
    data: {
      object: { ...after, paid_amount: paid.mark, balance_amount: balance.mark },
      previous_attributes: { paid_amount: paidBefore.mark, balance_amount: balanceBefore.mark },
    },
  };
  return {
    guard: {
      name: 'settling',
      before: repository.settlingPaymentCte(),
      source: sql`from settled`,
      params: repository.settlingPaymentParams({
        companyId: invoice.companyId,
        uuid: invoice.uuid,
        added: centsToDecimal(added),
        updatedAt: now,
        shown: read.shownStatus,
        content: read.content,
      }),
      events: [event],
      marks: [paid, balance, paidBefore, balanceBefore],
      // The invoice's row (and the company's payment counter) is held from the settlement to the commit's end.
      flushAfterCommit: true,
    },
    balance,
  };
}
