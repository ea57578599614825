import { AppError } from '../../errors.js';
import type { Cents } from '../../shared/money.js';

/** Values the API shows; Overdue is never stored, it is derived on read. */
export const INVOICE_STATUSES = ['Draft', 'Pending', 'Paid', 'Overdue'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];
export type StoredInvoiceStatus = Exclude<InvoiceStatus, 'Overdue'>;

export const DEFAULT_TIMEZONE = 'America/New_York';

/** One date formatter per timezone: building one costs far more than formatting with it. */
const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** Today (YYYY-MM-DD) in an IANA timezone. */
export function businessToday(timezone: string, now = new Date()): string {
  let format = dayFormats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' });
    // Timezones are validated IANA names, a few hundred at most.
    dayFormats.set(timezone, format);
  }
  return format.format(now);
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
    { field: 'status', code: 'invalid', message: why },
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
