import { z } from 'zod';
import { listQueryShape } from '../../shared/list-query.js';

export const UserRecord = z
  .object({
    id: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string().nullable(),
  })
  .meta({ id: 'User' });
export type UserRecord = z.infer<typeof UserRecord>;

export const ListUsersQuery = z.strictObject({ ...listQueryShape });
export type ListUsersQuery = z.infer<typeof ListUsersQuery>;
