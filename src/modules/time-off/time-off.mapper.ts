import type { TimeOffRow } from './time-off.repository.js';
import type { TimeOffResponse } from './time-off.schemas.js';

/** A time-off entry as its GET answers it; the field order is the JSON order. */
export function toTimeOffResponse(row: TimeOffRow): TimeOffResponse {
  return {
    uuid: row.uuid,
    user_id: row.userId,
    starts_at: row.startsAt.toISOString(),
    ends_at: row.endsAt.toISOString(),
    reason: row.reason,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    deleted_at: row.deletedAt?.toISOString() ?? null,
  };
}
