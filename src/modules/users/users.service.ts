import type { Db } from '../../db/client.js';
import { rowToRecord } from '../../shared/records.js';
import { listUsers } from './users.repository.js';
import type { ListUsersQuery, UserRecord } from './users.schemas.js';

export async function listCompanyUsers(db: Db, companyId: string, query: ListUsersQuery) {
  const page = await listUsers(db, companyId, query);
  return { items: page.items.map((row) => rowToRecord(row) as UserRecord), pagination: page.pagination };
}
