import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The secret that signs photo and share links when PHOTO_URL_SECRET is not set: one row, made by the first
 * instance that starts, so links outlive restarts and verify on every instance of one database.
 */
export const linkSecrets = pgTable('link_secrets', {
  id: integer('id').primaryKey(),
  secret: text('secret').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
});
