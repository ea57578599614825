import type { Db } from '../../db/client.js';
import { toUserResponse } from './users.mapper.js';
import { listUsers } from './users.repository.js';
import type { ListUsersQuery } from './users.schemas.js';

export async function listCompanyUsers(db: Db, companyId: string, query: ListUsersQuery) {
  const page = await listUsers(db, companyId, query);
  return { items: page.items.map(toUserResponse), pagination: page.pagination };
}
