import { sql } from 'drizzle-orm';
import { timestamp, uuid } from 'drizzle-orm/pg-core';

/** Columns every tenant table shares: the (company_id, uuid) key and the lifecycle timestamps. */
export const tenantKey = {
  companyId: uuid('company_id').notNull(),
  uuid: uuid('uuid').notNull(),
};

export const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date', precision: 3 });

export const lifecycle = {
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  deletedAt: timestamptz('deleted_at'),
};

/** Lower-cased search haystack; \x1f keeps matches from spanning two fields. */
export const searchText = (...parts: string[]) =>
  sql.raw(`lower(${parts.map((part) => `coalesce(${part}, '')`).join(` || chr(31) || `)})`);
