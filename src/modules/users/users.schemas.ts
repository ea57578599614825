import { z } from 'zod';
import { pageQueryShape } from '../../shared/list-query.js';

export const UserResponse = z
  .object({
    id: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string().nullable(),
  })
  .meta({ id: 'User' });
export type UserResponse = z.infer<typeof UserResponse>;

export const ListUsersQuery = z.strictObject({ ...pageQueryShape });
export type ListUsersQuery = z.infer<typeof ListUsersQuery>;

/** A user embedded in jobs (assigned_user) and photos (user). */
export const UserEmbed = UserResponse.pick({ id: true, first_name: true, last_name: true });
