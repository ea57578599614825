import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { customers, locations } from '../../db/schema/index.js';
import type { Actor } from '../../auth/principal.js';
import { notFound } from '../../errors.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { jsonPage, mapPage } from '../../shared/list-query.js';
import { bodyToColumns } from '../../shared/records.js';
import { requireReference } from '../../shared/tenant-table.js';
import { changeRecord, createRecord, getRecord, removeRecord, type RecordedType } from '../changes/change-recorder.js';
import { toCustomerResponse } from './customers.mapper.js';
import * as repository from './customers.repository.js';
import type {
  CreateCustomerBody,
  CustomerResponse,
  ListCustomersQuery,
  UpdateCustomerBody,
} from './customers.schemas.js';

/** One statement: the row, its event and a keyed request's key (createRecord); a reference is checked before. */
async function create(db: Db, actor: Actor, body: CreateCustomerBody) {
  await requireReference(db, locations, actor.companyId, 'primary_service_location_uuid', body.primary_service_location_uuid);
  return createRecord(db, actor, 'customer', { ...bodyToColumns(body), uuid: newRecordId() });
}

/** Two round trips: the row read, then the new row and its event written if no other write came between (changeRecord). */
async function update(db: Db, actor: Actor, uuid: string, body: UpdateCustomerBody) {
  return changeRecord(db, actor, 'customer', uuid, async () => {
    await requireReference(db, locations, actor.companyId, 'primary_service_location_uuid', body.primary_service_location_uuid);
    return bodyToColumns(body);
  });
}

declare module '../changes/change-recorder.js' {
  interface RecordedObjects {
    customer: CustomerResponse;
  }
}

/** How a customer is read: by its GET and by the change recorder (listed in events/recorded-types.ts). */
export const customerRecords: RecordedType<CustomerResponse> = {
  table: customers,
  noun: 'Customer',
  embeds: [],
  fromRow: toCustomerResponse,
  // Read in its API form: the row is the record (customers.mapper.ts, customerApiFields).
  find: (db, companyId, uuid, includeDeleted) => repository.findCustomerRecord(db, companyId, uuid, includeDeleted),
  async lockAndLoad(db, companyId, uuid, includeDeleted) {
    const row = await repository.lockCustomer(db, companyId, uuid, includeDeleted);
    return row && { row, record: toCustomerResponse(row) };
  },
};

export const customersService: CrudService<CustomerResponse, CustomerResponse, CreateCustomerBody, UpdateCustomerBody, ListCustomersQuery> = {
  list: async (db, companyId, query) =>
    query.search
      ? mapPage(await repository.searchCustomers(db, companyId, { ...query, search: query.search }), toCustomerResponse)
      : mapPage(await repository.listCustomerJson(db, companyId, query), (json) => JSON.parse(json) as CustomerResponse),
  // A page without a search term, the most frequent list: the JSON text PostgreSQL writes for each item.
  listJson: async (db, companyId, query) => (query.search ? null : jsonPage(await repository.listCustomerJson(db, companyId, query))),
  get: (db, companyId, uuid, includeDeleted) => getRecord(customerRecords, db, companyId, uuid, includeDeleted),
  // The GET, the most frequent request: the JSON text PostgreSQL writes is the answer (src/db/perf/api-rows.ts).
  getJson: async (db, companyId, uuid, includeDeleted) => {
    const json = await repository.findCustomerJson(db, companyId, uuid, includeDeleted);
    if (json === null) throw notFound(customerRecords.noun);
    return json;
  },
  create,
  update,
  remove: (db, actor, uuid) => removeRecord(db, actor, 'customer', uuid),
};
