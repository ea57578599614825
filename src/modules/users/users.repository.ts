import type { Db } from '../../db/client.js';
import { users } from '../../db/schema/index.js';
import { countRows, newestFirst, paginate, scoped } from '../../shared/tenant-table.js';
import type { ListUsersQuery } from './users.schemas.js';

export type UserInsert = typeof users.$inferInsert;

const userColumns = {
  id: users.uuid,
  firstName: users.firstName,
  lastName: users.lastName,
  email: users.email,
};

export function listUsers(db: Db, companyId: string, query: ListUsersQuery) {
  const where = scoped(users, companyId, query.include_deleted);
  return paginate(
    query,
    (offset, limit) => db.select(userColumns).from(users).where(where).orderBy(...newestFirst(users)).limit(limit).offset(offset),
    () => countRows(db, users, companyId, query.include_deleted),
  );
}

export async function insertUser(db: Db, values: UserInsert) {
  const [row] = await db.insert(users).values(values).returning({ id: users.uuid });
  return row;
}
