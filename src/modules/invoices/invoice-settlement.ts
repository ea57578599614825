import type { Db } from '../../db/client.js';
import type { Changes } from '../events/change-recorder.js';
import { AppError } from '../../errors.js';
import { centsToDecimal, fromCents, toCents } from '../../shared/money.js';
import { markJobPaid } from '../jobs/jobs.repository.js';
import { settledStatus, type StoredInvoiceStatus } from './invoice-status.js';
import * as repository from './invoices.repository.js';

export type LockedInvoice = repository.InvoiceRow;

/** Locks the invoice row for the rest of the transaction; every balance change starts here. */
export function lockInvoice(tx: Db, companyId: string, uuid: string, options: { includeDeleted?: boolean } = {}) {
  return repository.lockInvoice(tx, companyId, uuid, options.includeDeleted ?? false);
}

/**
 * Recomputes a locked invoice from its payments: paid = live Completed payments, balance = total - paid,
 * a zero balance makes it Paid (its job gets paid_at), a rising balance returns a Paid invoice to
 * Pending. A payment write that would make paid exceed the total is refused (400) and rolled back.
 * `status` is the stored status to settle from (an update may have just requested one).
 */
export async function settleInvoice(
  changes: Changes,
  invoice: LockedInvoice,
  status: StoredInvoiceStatus = invoice.status,
): Promise<void> {
  const { tx, companyId } = changes;
  const total = toCents(invoice.totalAmount);
  const paid = toCents(await repository.sumCompletedPayments(tx, companyId, invoice.uuid));
  if (paid > total) {
    const balance = total - toCents(invoice.paidAmount);
    throw new AppError('validation_error', `Invalid amount: the invoice balance is ${fromCents(balance)}; payments may not exceed the total.`, [
      { field: 'amount', message: `would make paid_amount exceed total_amount (balance ${fromCents(balance)})` },
    ]);
  }
  const balance = total - paid;
  const nextStatus = settledStatus(status, balance);
  const changed =
    nextStatus !== invoice.status || paid !== toCents(invoice.paidAmount) || balance !== toCents(invoice.balanceAmount);
  if (changed) {
    await changes.touch('invoice', invoice.uuid);
    await repository.updateInvoice(tx, companyId, invoice.uuid, {
      paidAmount: centsToDecimal(paid),
      balanceAmount: centsToDecimal(balance),
      status: nextStatus,
    });
  }
  if (nextStatus === 'Paid' && invoice.status !== 'Paid' && invoice.jobUuid) {
    await changes.touch('job', invoice.jobUuid);
    await markJobPaid(tx, companyId, invoice.jobUuid);
  }
}
