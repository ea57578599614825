import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { crudRoutes } from '../../shared/crud-routes.js';
import { CreateTimeOffBody, ListTimeOffQuery, TimeOffResponse, UpdateTimeOffBody } from './time-off.schemas.js';
import { timeOffService } from './time-off.service.js';

const HOLDS =
  'Live time off holds its user for [starts_at, ends_at) as a visit does: a write after which the user would be held twice ' +
  'at a moment (by a visit or other time off) is 409 `schedule_conflict` naming user_id and listing the clashes in ' +
  '`error.conflicts`, and changes nothing.';

export const timeOffRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const crud = crudRoutes(app, {
    scope: 'schedule',
    tag: 'Time off',
    noun: 'Time off entry',
    plural: 'time_off',
    listItem: TimeOffResponse,
    record: TimeOffResponse,
    createBody: CreateTimeOffBody,
    updateBody: UpdateTimeOffBody,
    listQuery: ListTimeOffQuery,
    service: timeOffService,
    updateErrors: [409],
    descriptions: {
      list:
        'Newest first unless sort says otherwise. Filters combine with AND: user_id, and from / to: the entries whose ' +
        '[starts_at, ends_at) overlaps [from, to) (either alone is open-ended).',
      create: `Required user_id (a user of the company), starts_at and ends_at (after starts_at, at most 366 days later). ${HOLDS}`,
      update: `Partial update: absent fields are unchanged, null clears reason. ${HOLDS}`,
      remove: "Sets deleted_at and frees the user's time; the entry stays and is listed only with include_deleted=true.",
    },
  });
  app.get('/time_off', crud.list('listTimeOff'));
  app.get('/time_off/:uuid', crud.get('getTimeOff'));
  app.post('/time_off', crud.create('createTimeOff'));
  app.put('/time_off/:uuid', crud.update('updateTimeOff'));
  app.patch('/time_off/:uuid', crud.patch('patchTimeOff'));
  app.delete('/time_off/:uuid', crud.remove('deleteTimeOff'));
};
