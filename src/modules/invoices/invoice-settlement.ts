import type { Db } from '../../db/client.js';
import type { Changes } from '../changes/change-recorder.js';
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
  const total = toCents(invoice.totalAmount);
  const paid =
    added === undefined
      ? toCents(await repository.sumCompletedPayments(tx, companyId, invoice.uuid))
      : toCents(invoice.paidAmount) + added;
  if (paid > total) {
    const balance = total - toCents(invoice.paidAmount);
    throw invalidField('amount', `would make paid_amount exceed total_amount (the balance is ${fromCents(balance)})`, 'out_of_range');
  }
  const balance = total - paid;
  const nextStatus = settledStatus(status, balance);
  const changed =
    nextStatus !== invoice.status || paid !== toCents(invoice.paidAmount) || balance !== toCents(invoice.balanceAmount);
  let settled: SettledInvoice | null = detail ? { invoice, shownStatus: detail.shownStatus } : null;
  if (changed) {
    await changes.touch('invoice', invoice.uuid);
    settled = await repository.writeSettlement(tx, companyId, invoice.uuid, {
      paidAmount: centsToDecimal(paid),
      balanceAmount: centsToDecimal(balance),
      status: nextStatus,
    });
  }
  if (detail && settled) changes.after('invoice', invoice.uuid, toInvoiceResponse({ ...detail, ...settled }));
  if (nextStatus === 'Paid' && invoice.status !== 'Paid' && invoice.jobUuid) {
    await changes.touch('job', invoice.jobUuid);
    await markJobPaid(tx, companyId, invoice.jobUuid);
  }
  return settled;
}
