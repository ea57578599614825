import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../db/client.js';
import { customers, locations } from '../../db/schema/index.js';
import { notFound } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { bodyToColumns } from '../../shared/records.js';
import { requireReference } from '../../shared/tenant-table.js';
import { recordChanges, registerRecordedType } from '../events/change-recorder.js';
import { toCustomerResponse } from './customers.mapper.js';
import * as repository from './customers.repository.js';
import type {
  CreateCustomerBody,
  CustomerResponse,
  ListCustomersQuery,
  UpdateCustomerBody,
} from './customers.schemas.js';

async function list(db: Db, companyId: string, query: ListCustomersQuery) {
  const page = await repository.listCustomers(db, companyId, query);
  return { items: page.items.map(toCustomerResponse), pagination: page.pagination };
}

async function get(db: Db, companyId: string, uuid: string, includeDeleted: boolean) {
  const row = await repository.findCustomer(db, companyId, uuid, includeDeleted);
  if (!row) throw notFound('Customer');
  return toCustomerResponse(row);
}

async function create(db: Db, actor: Actor, body: CreateCustomerBody) {
  const uuid = uuidv7();
  return recordChanges(db, actor, async (changes) => {
    await requireReference(changes.tx, locations, actor.companyId, 'primary_service_location_uuid', body.primary_service_location_uuid);
    const row = await repository.insertCustomer(changes.tx, {
      ...(bodyToColumns(body) as Omit<repository.CustomerInsert, 'companyId' | 'uuid'>),
      companyId: actor.companyId,
      uuid,
    });
    // The inserted row is the record a GET would read: no second read.
    changes.created('customer', uuid, toCustomerResponse(row));
    return changes.answer('customer', uuid);
  });
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdateCustomerBody) {
  return recordChanges(db, actor, async (changes) => {
    await changes.target('customer', uuid);
    await requireReference(changes.tx, locations, actor.companyId, 'primary_service_location_uuid', body.primary_service_location_uuid);
    await repository.updateCustomer(changes.tx, actor.companyId, uuid, bodyToColumns(body));
    return changes.answer('customer', uuid);
  });
}

async function remove(db: Db, actor: Actor, uuid: string) {
  await recordChanges(db, actor, async (changes) => {
    await changes.target('customer', uuid);
    await repository.softDeleteCustomer(changes.tx, actor.companyId, uuid);
  });
}

export const customersService: CrudService<CustomerResponse, CustomerResponse, CreateCustomerBody, UpdateCustomerBody, ListCustomersQuery> = {
  list,
  get,
  create,
  update,
  remove,
};

registerRecordedType('customer', {
  table: customers,
  noun: 'Customer',
  embeds: [],
  load: (db, companyId, uuid) => get(db, companyId, uuid, true),
  async lockAndLoad(db, companyId, uuid, includeDeleted) {
    const row = await repository.lockCustomer(db, companyId, uuid, includeDeleted);
    return row && { row, record: toCustomerResponse(row) };
  },
});
