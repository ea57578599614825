import { and, eq, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { customers } from '../../db/schema/index.js';
import { byUuid, countRows, newestFirst, paginate, scoped, searchMatches, softDelete } from '../../shared/tenant-table.js';
import type { ListCustomersQuery } from './customers.schemas.js';

export type CustomerRow = typeof customers.$inferSelect;
export type CustomerInsert = typeof customers.$inferInsert;

export function findCustomer(db: Db, companyId: string, uuid: string, includeDeleted = false) {
  return db
    .select()
    .from(customers)
    .where(byUuid(customers, companyId, uuid, includeDeleted))
    .limit(1)
    .then((rows) => rows[0] ?? null);
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
  const filters = [filterCondition(query.filter), searchMatches(customers.searchText, query.search)];
  const where = and(scoped(customers, companyId, query.include_deleted), ...filters);
  return paginate(
    query,
    (offset, limit) =>
      db.select().from(customers).where(where).orderBy(...newestFirst(customers, query.search)).limit(limit).offset(offset),
    () => countRows(db, customers, companyId, query.include_deleted, filters),
  );
}

export async function insertCustomer(db: Db, values: CustomerInsert): Promise<CustomerRow> {
  const [row] = await db.insert(customers).values(values).returning();
  return row;
}

export async function updateCustomer(db: Db, companyId: string, uuid: string, values: Partial<CustomerInsert>) {
  const [row] = await db
    .update(customers)
    .set({ ...values, updatedAt: new Date() })
    .where(byUuid(customers, companyId, uuid))
    .returning();
  return row ?? null;
}

export function softDeleteCustomer(db: Db, companyId: string, uuid: string) {
  return softDelete(db, customers, companyId, uuid);
}
