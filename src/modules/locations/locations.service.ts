import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../db/client.js';
import { locations } from '../../db/schema/index.js';
import { AppError, notFound } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { bodyToColumns } from '../../shared/records.js';
import { recordChanges, registerRecordedType, type Changes } from '../events/change-recorder.js';
import { toLocationResponse } from './locations.mapper.js';
import * as repository from './locations.repository.js';
import type {
  CreateLocationBody,
  ListLocationsQuery,
  LocationResponse,
  UpdateLocationBody,
} from './locations.schemas.js';

async function list(db: Db, companyId: string, query: ListLocationsQuery) {
  const page = await repository.listLocations(db, companyId, query);
  return { items: page.items.map(toLocationResponse), pagination: page.pagination };
}

async function get(db: Db, companyId: string, uuid: string, includeDeleted: boolean) {
  const row = await repository.findLocation(db, companyId, uuid, includeDeleted);
  if (!row) throw notFound('Location');
  return toLocationResponse(row);
}

/** Makes `uuid` the only primary location, recording the location that stops being primary. */
async function takePrimary(changes: Changes, uuid: string | null) {
  await repository.lockPrimary(changes.tx, changes.companyId);
  for (const previous of await repository.primaryUuids(changes.tx, changes.companyId, uuid)) {
    await changes.touch('location', previous);
  }
  await repository.clearPrimary(changes.tx, changes.companyId, uuid);
}

async function create(db: Db, actor: Actor, body: CreateLocationBody) {
  const uuid = uuidv7();
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

export const locationsService: CrudService<LocationResponse, LocationResponse, CreateLocationBody, UpdateLocationBody, ListLocationsQuery> = {
  list,
  get,
  create,
  update,
  remove,
};

registerRecordedType('location', {
  table: locations,
  noun: 'Location',
  embeds: [],
  load: (db, companyId, uuid) => get(db, companyId, uuid, true),
});
