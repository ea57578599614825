import { eq, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { customers } from '../../db/schema/index.js';
import { countRows, findRow, paginate, searchMatches, selectPage, syncFilter } from '../../shared/tenant-table.js';
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

export function listCustomers(db: Db, companyId: string, query: ListCustomersQuery) {
  const filters = [filterCondition(query.filter), searchMatches(customers.searchText, query.search), syncFilter(customers, query)];
  return paginate(
    query,
    (offset, limit) => selectPage(db, customers, companyId, { includeDeleted: query.include_deleted, filters, search: query.search, sort: query.sort, offset, limit }),
    () => countRows(db, customers, companyId, query.include_deleted, filters),
  );
}

