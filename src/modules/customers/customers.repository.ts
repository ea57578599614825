import { eq, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { customers } from '../../db/schema/index.js';
import { countRows, findApiJson, findRow, paginate, searchMatches, selectApiJsonPage, selectPage, syncFilter } from '../../shared/tenant-table.js';
import { customerApiFields } from './customers.mapper.js';
import type { CustomerResponse } from './customers.schemas.js';
import type { ListCustomersQuery } from './customers.schemas.js';

export type CustomerRow = typeof customers.$inferSelect;
export type CustomerInsert = typeof customers.$inferInsert;

export function findCustomer(db: Db, companyId: string, uuid: string, includeDeleted = false) {
  return findRow(db, customers, companyId, uuid, { includeDeleted });
}

/** The customer row, locked until the transaction ends. */
export function lockCustomer(db: Db, companyId: string, uuid: string, includeDeleted: boolean) {
  return findRow(db, customers, companyId, uuid, { includeDeleted, lock: true });
}

function filterCondition(filter: ListCustomersQuery['filter']): SQL | undefined {
  switch (filter) {
    case 'residential':
      return eq(customers.customerType, 'Residential');
    case 'commercial':
      return eq(customers.customerType, 'Commercial');
    case 'vip':
      return eq(customers.isVip, true);
    default:
      return undefined;
  }
}

/** The customer's JSON text as its GET answers it (src/db/perf/api-rows.ts), or null. */
export function findCustomerJson(db: Db, companyId: string, uuid: string, includeDeleted: boolean) {
  return findApiJson(db, customers, customerApiFields, companyId, uuid, includeDeleted);
}

/** The customer as its GET answers it (the same read, parsed), or null. */
export async function findCustomerRecord(db: Db, companyId: string, uuid: string, includeDeleted: boolean): Promise<CustomerResponse | null> {
  const json = await findCustomerJson(db, companyId, uuid, includeDeleted);
  return json === null ? null : (JSON.parse(json) as CustomerResponse);
}

/** A page of customers as rows, for a search (its count comes with the page). */
export function searchCustomers(db: Db, companyId: string, query: ListCustomersQuery & { search: string }) {
  const filters = [filterCondition(query.filter), searchMatches(customers.searchText, query.search), syncFilter(customers, query)];
  return paginate(
    query,
    (offset, limit) => selectPage(db, customers, companyId, { includeDeleted: query.include_deleted, filters, search: query.search, sort: query.sort, offset, limit }),
    () => countRows(db, customers, companyId, query.include_deleted, filters),
  );
}

/** A page of customers without a search term, each one as its JSON text (src/db/perf/api-rows.ts): the items as they are answered. */
export function listCustomerJson(db: Db, companyId: string, query: ListCustomersQuery) {
  const filters = [filterCondition(query.filter), syncFilter(customers, query)];
  return paginate(
    query,
    (offset, limit) => selectApiJsonPage(db, customers, customerApiFields, companyId, { includeDeleted: query.include_deleted, filters, sort: query.sort, offset, limit }),
    () => countRows(db, customers, companyId, query.include_deleted, filters),
  );
}
