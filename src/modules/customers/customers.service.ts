import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../db/client.js';
import { locations } from '../../db/schema/index.js';
import { notFound } from '../../errors.js';
import type { Actor, CrudService } from '../../shared/crud-routes.js';
import { bodyToColumns, rowToRecord } from '../../shared/records.js';
import { requireReference } from '../../shared/tenant-table.js';
import * as repository from './customers.repository.js';
import type {
  CreateCustomerBody,
  CustomerRecord,
  ListCustomersQuery,
  UpdateCustomerBody,
} from './customers.schemas.js';

export function toCustomerRecord(row: repository.CustomerRow): CustomerRecord {
  return rowToRecord(row) as CustomerRecord;
}

async function list(db: Db, companyId: string, query: ListCustomersQuery) {
  const page = await repository.listCustomers(db, companyId, query);
  return { items: page.items.map(toCustomerRecord), pagination: page.pagination };
}

async function get(db: Db, companyId: string, uuid: string, includeDeleted: boolean) {
  const row = await repository.findCustomer(db, companyId, uuid, includeDeleted);
  if (!row) throw notFound('Customer');
  return toCustomerRecord(row);
}

async function create(db: Db, actor: Actor, body: CreateCustomerBody) {
  await requireReference(db, locations, actor.companyId, 'primary_service_location_uuid', body.primary_service_location_uuid);
  const row = await repository.insertCustomer(db, {
    ...(bodyToColumns(body) as Omit<repository.CustomerInsert, 'companyId' | 'uuid'>),
    companyId: actor.companyId,
    uuid: uuidv7(),
  });
  return toCustomerRecord(row);
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdateCustomerBody) {
  if (!(await repository.findCustomer(db, actor.companyId, uuid))) throw notFound('Customer');
  await requireReference(db, locations, actor.companyId, 'primary_service_location_uuid', body.primary_service_location_uuid);
  const row = await repository.updateCustomer(db, actor.companyId, uuid, bodyToColumns(body));
  if (!row) throw notFound('Customer');
  return toCustomerRecord(row);
}

async function remove(db: Db, actor: Actor, uuid: string) {
  const { companyId } = actor;
  if (!(await repository.softDeleteCustomer(db, companyId, uuid))) throw notFound('Customer');
}

export const customersService: CrudService<CustomerRecord, CreateCustomerBody, UpdateCustomerBody, ListCustomersQuery> = {
  list,
  get,
  create,
  update,
  remove,
};
