import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { crudRoutes } from '../../shared/crud-routes.js';
import { CreateVisitBody, ListVisitsQuery, UpdateVisitBody, VisitResponse } from './visits.schemas.js';
import { visitsService } from './visits.service.js';

const TIMES =
  'Times come in one of two forms: starts_at and ends_at (timestamps with an offset), or local_date, local_start_time and ' +
  'local_end_time read in time_zone (the end later the same day); both forms at once, or part of one, is 400. A local time ' +
  'skipped by a daylight-saving change is 400 naming the field; a repeated one means its first occurrence. ends_at must be ' +
  'after starts_at and at most 24 hours later. The local fields of the answer are always computed from the instants.';

const CONFLICTS =
  'A visit that is live, not Completed or Cancelled and not allow_overlap holds each assigned user for [starts_at, ends_at) ' +
  '(back-to-back visits are fine), as time off does: a write after which a user would be held twice at a moment is 409 ' +
  '`schedule_conflict` naming each clashing assigned_user_ids[i] in details and the clashing visits and time off in ' +
  '`error.conflicts`, and changes nothing. PostgreSQL enforces it, across instances and concurrent clients.';

const STATUS =
  'Status moves forward Scheduled, Dispatched, En Route, On Site, Completed (skipping allowed); any status but Completed ' +
  'may move to Cancelled; any other move is 400 `invalid_status_transition`. The first move to (or create in) a status sets ' +
  'dispatched_at, en_route_at, arrived_at, completed_at or cancelled_at.';

export const visitRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const crud = crudRoutes(app, {
    scope: 'schedule',
    tag: 'Visits',
    noun: 'Visit',
    plural: 'visits',
    listItem: VisitResponse,
    record: VisitResponse,
    createBody: CreateVisitBody,
    updateBody: UpdateVisitBody,
    listQuery: ListVisitsQuery,
    service: visitsService,
    updateErrors: [409],
    descriptions: {
      list:
        'Newest first unless sort says otherwise (sort=starts_at for a schedule). Filters combine with AND: job_uuid, ' +
        'customer_uuid, location_uuid, assigned_user_id (visits that include the user), unassigned, status (comma-separated), ' +
        'and from / to: the visits whose [starts_at, ends_at) overlaps [from, to) (either alone is open-ended).',
      get: 'The visit with its job and assigned users. A soft-deleted visit is 404 unless include_deleted=true.',
      create:
        'Required job_uuid (a live job of the company) and the times. An open visit (not Completed or Cancelled) of a job that is ' +
        `New or Contacted moves the job to Scheduled. ${TIMES} ${CONFLICTS} ${STATUS}`,
      update:
        'Partial update: absent fields are unchanged, null clears a nullable field; job_uuid cannot change (400 read_only). ' +
        `Changing time_zone alone keeps the instants. ${TIMES} ${CONFLICTS} ${STATUS}`,
      remove: 'Sets deleted_at and frees the assigned users\' time; the visit stays and is listed only with include_deleted=true.',
    },
  });
  app.get('/visits', crud.list('listVisits'));
  app.get('/visits/:uuid', crud.get('getVisit'));
  app.post('/visits', crud.create('createVisit'));
  app.put('/visits/:uuid', crud.update('updateVisit'));
  app.patch('/visits/:uuid', crud.patch('patchVisit'));
  app.delete('/visits/:uuid', crud.remove('deleteVisit'));
};
