import { localParts } from '../../shared/wall-clock.js';
import type { VisitWithRelations } from './visits.repository.js';
import type { VisitResponse } from './visits.schemas.js';

/** A visit as its GET answers it; the local fields always computed from the instants. Field order is the JSON order. */
export function toVisitResponse({ visit, job, users }: VisitWithRelations): VisitResponse {
  const start = localParts(visit.startsAt, visit.timeZone);
  const end = localParts(visit.endsAt, visit.timeZone);
  const byId = new Map(users.map((user) => [user.id, user]));
  return {
    uuid: visit.uuid,
    job_uuid: visit.jobUuid,
    customer_uuid: job.customerUuid,
    location_uuid: job.locationUuid,
    title: visit.title,
    instructions: visit.instructions,
    time_zone: visit.timeZone,
    starts_at: visit.startsAt.toISOString(),
    ends_at: visit.endsAt.toISOString(),
    local_date: start.date,
    local_start_time: start.time,
    local_end_time: end.time,
    arrival_window_minutes: visit.arrivalWindowMinutes,
    assigned_user_ids: visit.assignedUserIds,
    allow_overlap: visit.allowOverlap,
    status: visit.status,
    dispatched_at: visit.dispatchedAt?.toISOString() ?? null,
    en_route_at: visit.enRouteAt?.toISOString() ?? null,
    arrived_at: visit.arrivedAt?.toISOString() ?? null,
    completed_at: visit.completedAt?.toISOString() ?? null,
    cancelled_at: visit.cancelledAt?.toISOString() ?? null,
    created_at: visit.createdAt.toISOString(),
    updated_at: visit.updatedAt.toISOString(),
    deleted_at: visit.deletedAt?.toISOString() ?? null,
    job: { uuid: job.uuid, title: job.title, status: job.status },
    assigned_users: visit.assignedUserIds.flatMap((id) => {
      const user = byId.get(id);
      return user ? [{ id: user.id, first_name: user.first_name, last_name: user.last_name }] : [];
    }),
  };
}
