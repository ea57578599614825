import type { UserResponse } from './users.schemas.js';

/** The user columns the API shows (listUsers selects exactly these). */
export interface UserRow {
  id: string;
  firstName: string;
  lastName: string;
  email: string | null;
}

/** A user as the API answers it; the field order is the JSON order. */
export function toUserResponse(row: UserRow): UserResponse {
  return { id: row.id, first_name: row.firstName, last_name: row.lastName, email: row.email };
}
