import { sql, type SQL } from 'drizzle-orm';
import { invoices } from '../../db/schema/index.js';
import { AppError } from '../../errors.js';
import type { Cents } from '../../shared/money.js';

/** Values the API shows; Overdue is never stored, it is derived on read. */
export const INVOICE_STATUSES = ['Draft', 'Pending', 'Paid', 'Overdue'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
export type StoredInvoiceStatus = Exclude<InvoiceStatus, 'Overdue'>;

export const DEFAULT_TIMEZONE = 'America/New_York';

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

/** Today (YYYY-MM-DD) in an IANA timezone. */
export function businessToday(timezone: string, now = new Date()): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

/**
 * The stored status once the balance is known: a balance of 0 makes a Pending invoice Paid, a balance
 * above 0 returns a Paid invoice to Pending. Drafts stay Drafts until issued.
 */
export function settledStatus(status: StoredInvoiceStatus, balance: Cents): StoredInvoiceStatus {
  if (status === 'Draft') return 'Draft';
  return balance === 0 ? 'Paid' : 'Pending';
}

function refuse(from: InvoiceStatus, to: InvoiceStatus, why: string): AppError {
  return new AppError('invalid_status_transition', `An invoice cannot move from ${from} to ${to}: ${why}`, [
    { field: 'status', message: why },
  ]);
}

/**
 * The stored status a requested status leads to (see UpdateInvoiceBody.status for the rules).
 * Setting the status the invoice already shows is a no-op.
 */
export function requestedStatus(
  current: { stored: StoredInvoiceStatus; shown: InvoiceStatus; balance: Cents; paid: Cents },
  requested: InvoiceStatus,
): StoredInvoiceStatus {
  const { stored, shown, balance, paid } = current;
  if (requested === shown || requested === stored) return stored;
  switch (requested) {
    case 'Overdue':
      throw refuse(shown, requested, 'Overdue is derived from due_date and cannot be set');
    case 'Paid':
      if (balance > 0) throw refuse(shown, requested, 'the balance is above 0; record payments instead');
      return 'Paid';
    case 'Pending':
      if (stored === 'Draft') return 'Pending';
      throw refuse(shown, requested, 'a Paid invoice reopens only when its balance rises (refund or deleted payment)');
    case 'Draft':
      if (stored === 'Pending' && paid === 0) return 'Draft';
      throw refuse(shown, requested, 'only a Pending invoice without completed payments can return to Draft');
  }
}
