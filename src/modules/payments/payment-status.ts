import { AppError, invalidField } from '../../errors.js';
import type { PaymentStatus } from '../../db/schema/index.js';

/** The allowed moves; everything else (except staying put) is invalid_status_transition. */
const ALLOWED_MOVES: Record<PaymentStatus, readonly PaymentStatus[]> = {
  Pending: ['Completed', 'Failed'],
  Completed: ['Refunded'],
  Failed: [],
  Refunded: [],
};

export function checkPaymentTransition(from: PaymentStatus, to: PaymentStatus): void {
  if (from === to || ALLOWED_MOVES[from].includes(to)) return;
  const allowed = ALLOWED_MOVES[from].join(' or ') || 'nothing';
  throw new AppError('invalid_status_transition', `A payment cannot move from ${from} to ${to}; ${from} may move to ${allowed}.`, [
    { field: 'status', code: 'invalid', message: `cannot move from ${from} to ${to}` },
  ]);
}

/**
 * processed_at for a payment in `status`: null while Pending; once Completed the value sent, else
 * the one it had, else now; Failed and Refunded keep theirs unless the client sends one.
 */
export function processedAtFor(status: PaymentStatus, sent: Date | null | undefined, current: Date | null, now = new Date()): Date | null {
  if (status === 'Pending') {
    if (sent) throw invalidField('processed_at', 'is set only once the payment is Completed');
    return null;
  }
  if (status === 'Completed') return sent ?? current ?? now;
  return sent !== undefined ? sent : current;
}
