import type { EstimateStatus } from '../../db/schema/index.js';
import { AppError } from '../../errors.js';

/** Only a Pending estimate moves; the other three states are final. */
const ALLOWED_MOVES: Record<EstimateStatus, readonly EstimateStatus[]> = {
  Pending: ['Accepted', 'Declined', 'Expired'],
  Accepted: [],
  Declined: [],
  Expired: [],
};

/** A customer's answer stamps responded_at; expiry is not an answer. */
const RESPONSES: ReadonlySet<EstimateStatus> = new Set(['Accepted', 'Declined']);

export interface StatusChange {
  status: EstimateStatus;
  respondedAt?: Date;
}

/**
 * The columns a requested status sets: nothing for the current status (a no-op), the move and its
 * timestamp for an allowed move, 400 invalid_status_transition for anything else.
 */
export function statusChange(current: EstimateStatus, requested: EstimateStatus | undefined, now: Date): StatusChange | null {
  if (requested === undefined || requested === current) return null;
  if (!ALLOWED_MOVES[current].includes(requested)) {
    throw new AppError('invalid_status_transition', `An estimate cannot move from ${current} to ${requested}.`, [
      { field: 'status', code: 'invalid', message: `cannot move from ${current} to ${requested}` },
    ]);
  }
  return RESPONSES.has(requested) ? { status: requested, respondedAt: now } : { status: requested };
}
