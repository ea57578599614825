import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { locations } from '../../db/schema/index.js';
import { AppError } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { mapPage } from '../../shared/list-query.js';
import { bodyToColumns } from '../../shared/records.js';
import { changeRecord, createRecord, getRecord, recordChanges, type Changes, type RecordedType } from '../changes/change-recorder.js';
import { toLocationResponse } from './locations.mapper.js';
import * as repository from './locations.repository.js';
import type {
  CreateLocationBody,
  ListLocationsQuery,
  LocationResponse,
  UpdateLocationBody,
} from './locations.schemas.js';

/** Makes `uuid` the only primary location, recording the location that stops being primary. */
async function takePrimary(changes: Changes, uuid: string | null) {
  await repository.lockPrimary(changes.tx, changes.companyId);
  for (const previous of await repository.primaryUuids(changes.tx, changes.companyId, uuid)) {
    await changes.touch('location', previous);
  }
  await repository.clearPrimary(changes.tx, changes.companyId, uuid);
}

async function create(db: Db, actor: Actor, body: CreateLocationBody) {
  const uuid = newRecordId();
  // A location that is not primary changes nothing else: one statement (createRecord).
  if (!body.is_primary) return createRecord(db, actor, 'location', { ...bodyToColumns(body), uuid });
  return recordChanges(db, actor, async (changes) => {
    if (body.is_primary) await takePrimary(changes, null);
    const row = await repository.insertLocation(changes.tx, {
      ...(bodyToColumns(body) as Omit<repository.LocationInsert, 'companyId' | 'uuid'>),
      companyId: actor.companyId,
      uuid,
    });
    changes.created('location', uuid, toLocationResponse(row));
    return changes.answer('location', uuid);
  });
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdateLocationBody) {
  // An update that does not make the location primary changes nothing else: two round trips (changeRecord).
  if (!body.is_primary) return changeRecord(db, actor, 'location', uuid, () => bodyToColumns(body));
  return recordChanges(db, actor, async (changes) => {
    // The primary lock first, as every primary change takes it, then the row.
    if (body.is_primary) await repository.lockPrimary(changes.tx, actor.companyId);
    await changes.target('location', uuid);
    if (body.is_primary) await takePrimary(changes, uuid);
    await repository.updateLocation(changes.tx, actor.companyId, uuid, bodyToColumns(body));
    return changes.answer('location', uuid);
  });
}

async function remove(db: Db, actor: Actor, uuid: string) {
  const { companyId } = actor;
  await recordChanges(db, actor, async (changes) => {
    // Under the primary lock, so the location cannot become primary between the check and the delete.
    await repository.lockPrimary(changes.tx, companyId);
    const existing = await changes.target<repository.LocationRow>('location', uuid);
    if (existing.isPrimary) {
      throw new AppError('primary_location', 'The primary location cannot be deleted; make another location primary first.');
    }
    await repository.softDeleteLocation(changes.tx, companyId, uuid);
  });
}

declare module '../changes/change-recorder.js' {
  interface RecordedObjects {
    location: LocationResponse;
  }
}

/** How a location is read: by its GET and by the change recorder (listed in events/recorded-types.ts). */
export const locationRecords: RecordedType<LocationResponse> = {
  table: locations,
  noun: 'Location',
  embeds: [],
  fromRow: toLocationResponse,
  async find(db, companyId, uuid, includeDeleted) {
    const row = await repository.findLocation(db, companyId, uuid, includeDeleted);
    return row && toLocationResponse(row);
  },
};

export const locationsService: CrudService<LocationResponse, LocationResponse, CreateLocationBody, UpdateLocationBody, ListLocationsQuery> = {
  list: async (db, companyId, query) => mapPage(await repository.listLocations(db, companyId, query), toLocationResponse),
  get: (db, companyId, uuid, includeDeleted) => getRecord(locationRecords, db, companyId, uuid, includeDeleted),
  create,
  update,
  remove,
};
