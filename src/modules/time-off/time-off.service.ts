import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { timeOff, users } from '../../db/schema/index.js';
import type { Actor } from '../../auth/principal.js';
import { invalidField } from '../../errors.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { mapPage } from '../../shared/list-query.js';
import { requireReference } from '../../shared/tenant-table.js';
import { getRecord, recordChanges, type RecordedType } from '../changes/change-recorder.js';
import { guardHolds, removeHolder } from '../schedule/schedule-holds.js';
import { toTimeOffResponse } from './time-off.mapper.js';
import * as repository from './time-off.repository.js';
import { MAX_TIME_OFF_DAYS, type CreateTimeOffBody, type ListTimeOffQuery, type TimeOffResponse, type UpdateTimeOffBody } from './time-off.schemas.js';

const MAX_TIME_OFF_MS = MAX_TIME_OFF_DAYS * 24 * 60 * 60 * 1000;

/** ends_at after starts_at, at most 366 days later (400 naming ends_at). */
function checkInterval(startsAt: Date, endsAt: Date): void {
  if (endsAt.getTime() <= startsAt.getTime()) throw invalidField('ends_at', 'must be after starts_at');
  if (endsAt.getTime() - startsAt.getTime() > MAX_TIME_OFF_MS) {
    throw invalidField('ends_at', `must be at most ${MAX_TIME_OFF_DAYS} days after starts_at`, 'out_of_range');
  }
}

async function create(db: Db, actor: Actor, body: CreateTimeOffBody): Promise<TimeOffResponse> {
  const uuid = newRecordId();
  const companyId = actor.companyId;
  checkInterval(body.starts_at, body.ends_at);
  return guardHolds(db, companyId, (holds) =>
    recordChanges(db, actor, async (changes) => {
      await requireReference(changes.tx, users, companyId, 'user_id', body.user_id);
      const row = await repository.insertTimeOff(changes.tx, {
        companyId,
        uuid,
        userId: body.user_id,
        startsAt: body.starts_at,
        endsAt: body.ends_at,
        reason: body.reason ?? null,
      });
      // Time off holds its user as a visit does: it cannot overlap a visit or other time off of the user.
      await holds.hold(changes.tx, companyId, {
        owner: { timeOffUuid: uuid },
        users: [{ field: 'user_id', userId: body.user_id }],
        startsAt: body.starts_at,
        endsAt: body.ends_at,
        fresh: true,
      });
      changes.created('time_off', uuid, toTimeOffResponse(row));
      return changes.answer('time_off', uuid);
    }),
  );
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdateTimeOffBody): Promise<TimeOffResponse> {
  const companyId = actor.companyId;
  return guardHolds(db, companyId, (holds) =>
    recordChanges(db, actor, async (changes) => {
      const current = await changes.target<repository.TimeOffRow>('time_off', uuid);
      await requireReference(changes.tx, users, companyId, 'user_id', body.user_id);
      const userId = body.user_id ?? current.userId;
      const startsAt = body.starts_at ?? current.startsAt;
      const endsAt = body.ends_at ?? current.endsAt;
      checkInterval(startsAt, endsAt);
      await repository.updateTimeOff(changes.tx, companyId, uuid, {
        userId,
        startsAt,
        endsAt,
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
      });
      const moved = userId !== current.userId || startsAt.getTime() !== current.startsAt.getTime() || endsAt.getTime() !== current.endsAt.getTime();
      if (moved) {
        await holds.hold(changes.tx, companyId, { owner: { timeOffUuid: uuid }, users: [{ field: 'user_id', userId }], startsAt, endsAt });
      }
      return changes.answer('time_off', uuid);
    }),
  );
}

function remove(db: Db, actor: Actor, uuid: string): Promise<void> {
  return removeHolder(db, actor, { objectType: 'time_off', table: timeOff, uuid, owner: { timeOffUuid: uuid } });
}

declare module '../changes/change-recorder.js' {
  interface RecordedObjects {
    time_off: TimeOffResponse;
  }
}

/** How a time-off entry is read: by its GET and by the change recorder (listed in events/recorded-types.ts). */
export const timeOffRecords: RecordedType<TimeOffResponse> = {
  table: timeOff,
  noun: 'Time off',
  embeds: [],
  async find(db, companyId, uuid, includeDeleted) {
    const row = await repository.findTimeOff(db, companyId, uuid, { includeDeleted });
    return row && toTimeOffResponse(row);
  },
};

export const timeOffService: CrudService<TimeOffResponse, TimeOffResponse, CreateTimeOffBody, UpdateTimeOffBody, ListTimeOffQuery> = {
  list: async (db, companyId, query) => {
    if (query.from && query.to && query.to <= query.from) throw invalidField('to', 'must be after from');
    return mapPage(await repository.listTimeOff(db, companyId, query), toTimeOffResponse);
  },
  get: (db, companyId, uuid, includeDeleted) => getRecord(timeOffRecords, db, companyId, uuid, includeDeleted),
  create,
  update,
  remove,
};
