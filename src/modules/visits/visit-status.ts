import type { VisitStatus } from '../../db/schema/index.js';
import { AppError } from '../../errors.js';

/** The forward order of a visit (DECISIONS §13); Cancelled stands apart. */
const FORWARD: readonly VisitStatus[] = ['Scheduled', 'Dispatched', 'En Route', 'On Site', 'Completed'];

/** Statuses that end a visit: no move out of them, and a visit in one holds no one. */
export const FINAL_STATUSES: ReadonlySet<VisitStatus> = new Set(['Completed', 'Cancelled']);

export interface VisitStatusTimestamps {
  dispatchedAt: Date | null;
  enRouteAt: Date | null;
  arrivedAt: Date | null;
  completedAt: Date | null;
  cancelledAt: Date | null;
}

const STAMP: Partial<Record<VisitStatus, keyof VisitStatusTimestamps>> = {
  Dispatched: 'dispatchedAt',
  'En Route': 'enRouteAt',
  'On Site': 'arrivedAt',
  Completed: 'completedAt',
  Cancelled: 'cancelledAt',
};

/** Whether a visit may move from `current` to `requested` (the same status is a no-op, not a move). */
export function canMove(current: VisitStatus, requested: VisitStatus): boolean {
  if (FINAL_STATUSES.has(current)) return false;
  if (requested === 'Cancelled') return true;
  return FORWARD.indexOf(requested) > FORWARD.indexOf(current);
}

/**
 * The columns a requested status sets: nothing for the current status (a no-op, DECISIONS §8), the status
 * and the first stamp of its timestamp for an allowed move, 400 invalid_status_transition otherwise.
 */
export function visitStatusChange(
  current: { status: VisitStatus } & VisitStatusTimestamps,
  requested: VisitStatus | undefined,
  now: Date,
): ({ status: VisitStatus } & Partial<VisitStatusTimestamps>) | null {
  if (requested === undefined || requested === current.status) return null;
  if (!canMove(current.status, requested)) {
    throw new AppError('invalid_status_transition', `A visit cannot move from ${current.status} to ${requested}.`, [
      { field: 'status', code: 'invalid', message: `cannot move from ${current.status} to ${requested}` },
    ]);
  }
  return { status: requested, ...statusStamp(requested, current, now) };
}

/** The timestamp a move to (or create in) `status` sets, unless it is already set. */
export function statusStamp(status: VisitStatus, current: VisitStatusTimestamps | null, now: Date): Partial<VisitStatusTimestamps> {
  const column = STAMP[status];
  if (!column || current?.[column]) return {};
  return { [column]: now };
}
