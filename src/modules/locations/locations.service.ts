import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../db/client.js';
import { AppError, notFound } from '../../errors.js';
import type { Actor, CrudService } from '../../shared/crud-routes.js';
import { bodyToColumns, rowToRecord } from '../../shared/records.js';
import * as repository from './locations.repository.js';
import type {
  CreateLocationBody,
  ListLocationsQuery,
  LocationRecord,
  UpdateLocationBody,
} from './locations.schemas.js';

export function toLocationRecord(row: repository.LocationRow): LocationRecord {
  return rowToRecord(row) as LocationRecord;
}

async function list(db: Db, companyId: string, query: ListLocationsQuery) {
  const page = await repository.listLocations(db, companyId, query);
  return { items: page.items.map(toLocationRecord), pagination: page.pagination };
}

async function get(db: Db, companyId: string, uuid: string, includeDeleted: boolean) {
  const row = await repository.findLocation(db, companyId, uuid, includeDeleted);
  if (!row) throw notFound('Location');
  return toLocationRecord(row);
}

async function create(db: Db, actor: Actor, body: CreateLocationBody) {
  const uuid = uuidv7();
  const row = await db.transaction(async (tx) => {
    if (body.is_primary) await repository.clearPrimary(tx, actor.companyId, null);
    return repository.insertLocation(tx, {
      ...(bodyToColumns(body) as Omit<repository.LocationInsert, 'companyId' | 'uuid'>),
      companyId: actor.companyId,
      uuid,
    });
  });
  return toLocationRecord(row);
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdateLocationBody) {
  const row = await db.transaction(async (tx) => {
    if (body.is_primary) {
      const existing = await repository.findLocation(tx, actor.companyId, uuid);
      if (!existing) throw notFound('Location');
      await repository.clearPrimary(tx, actor.companyId, uuid);
    }
    return repository.updateLocation(tx, actor.companyId, uuid, bodyToColumns(body));
  });
  if (!row) throw notFound('Location');
  return toLocationRecord(row);
}

async function remove(db: Db, actor: Actor, uuid: string) {
  const { companyId } = actor;
  await db.transaction(async (tx) => {
    // Under the primary lock, so the location cannot become primary between the check and the delete.
    await repository.lockPrimary(tx, companyId);
    const existing = await repository.findLocation(tx, companyId, uuid);
    if (!existing) throw notFound('Location');
    if (existing.isPrimary) {
      throw new AppError('primary_location', 'The primary location cannot be deleted; make another location primary first.');
    }
    if (!(await repository.softDeleteLocation(tx, companyId, uuid))) throw notFound('Location');
  });
}

export const locationsService: CrudService<LocationRecord, CreateLocationBody, UpdateLocationBody, ListLocationsQuery> = {
  list,
  get,
  create,
  update,
  remove,
};
