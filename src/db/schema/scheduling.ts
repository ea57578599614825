import { sql } from 'drizzle-orm';
import { boolean, check, foreignKey, index, integer, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { users } from './companies.js';
import { lifecycle, listIndexes, tenantKey, timestamptz } from './columns.js';
import { jobs } from './jobs.js';

/** Where a visit stands (DECISIONS §13): forward in this order, Cancelled from any but Completed. */
export const VISIT_STATUSES = ['Scheduled', 'Dispatched', 'En Route', 'On Site', 'Completed', 'Cancelled'] as const;
export type VisitStatus = (typeof VISIT_STATUSES)[number];

/** A visit: when a job is done and by whom. assigned_user_ids keeps the order the client gave. */
export const visits = pgTable(
  'visits',
  {
    ...tenantKey,
    jobUuid: uuid('job_uuid').notNull(),
    title: text('title'),
    instructions: text('instructions'),
    timeZone: text('time_zone').notNull(),
    startsAt: timestamptz('starts_at').notNull(),
    endsAt: timestamptz('ends_at').notNull(),
    arrivalWindowMinutes: integer('arrival_window_minutes'),
    assignedUserIds: uuid('assigned_user_ids').array().notNull().default(sql`'{}'::uuid[]`),
    allowOverlap: boolean('allow_overlap').notNull().default(false),
    status: text('status').$type<VisitStatus>().notNull().default('Scheduled'),
    dispatchedAt: timestamptz('dispatched_at'),
    enRouteAt: timestamptz('en_route_at'),
    arrivedAt: timestamptz('arrived_at'),
    completedAt: timestamptz('completed_at'),
    cancelledAt: timestamptz('cancelled_at'),
    /** The iCalendar SEQUENCE of the visit: grows with every change. */
    sequence: integer('sequence').notNull().default(0),
    /**
     * The visit's GET form as JSON text, copied to visit_assignees, whose rows a technician's window sends as
     * they are. Written by triggers (migration 0019) on every write of the visit but a booking's, which gives the
     * text of its own answer, and on a change of what it embeds (its job's title, status, customer and location;
     * its users' names). Null for a row from before the migration until its next write. Never read as a field.
     */
    recordJson: text('record_json'),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId, table.jobUuid], foreignColumns: [jobs.companyId, jobs.uuid] }),
    ...listIndexes('visits', table, { job: table.jobUuid }),
    // sort=starts_at and the from/to window (a visit lasts at most 24 hours, so the window bounds starts_at).
    index('visits_company_starts_idx').on(table.companyId, table.startsAt, table.uuid).where(sql`${table.deletedAt} is null`),
    // assigned_user_id: the visits whose array holds the user (btree_gin gives the company column its GIN class).
    index('visits_company_assignees_idx').using('gin', table.companyId, table.assignedUserIds).where(sql`${table.deletedAt} is null`),
    check('visits_interval_check', sql`${table.endsAt} > ${table.startsAt}`),
  ],
);

/**
 * One row per user of each live visit, whatever its status: a technician's visits as an index range
 * (company, user, starts_at), which the GIN index on the array cannot give in start order. Written only
 * by the visit_assignees_sync trigger on visits (migrations 0018 and 0019), so every write of a visit keeps it.
 */
export const visitAssignees = pgTable(
  'visit_assignees',
  {
    companyId: uuid('company_id').notNull(),
    visitUuid: uuid('visit_uuid').notNull(),
    userId: uuid('user_id').notNull(),
    startsAt: timestamptz('starts_at').notNull(),
    endsAt: timestamptz('ends_at').notNull(),
    /** The visit's record_json, copied by the same trigger, so a technician's window reads its own rows. */
    recordJson: text('record_json'),
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.visitUuid, table.userId] }),
    foreignKey({ columns: [table.companyId, table.visitUuid], foreignColumns: [visits.companyId, visits.uuid] }).onDelete('cascade'),
    // A technician's window in start order; ends_at too, so the window and its count read the index only.
    index('visit_assignees_window_idx').on(table.companyId, table.userId, table.startsAt, table.visitUuid, table.endsAt),
  ],
);

/** A user's time off: it holds its user as a visit does. */
export const timeOff = pgTable(
  'time_off',
  {
    ...tenantKey,
    userId: uuid('user_id').notNull(),
    startsAt: timestamptz('starts_at').notNull(),
    endsAt: timestamptz('ends_at').notNull(),
    reason: text('reason'),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId, table.userId], foreignColumns: [users.companyId, users.uuid] }),
    ...listIndexes('time_off', table, { user: table.userId }),
    check('time_off_interval_check', sql`${table.endsAt} > ${table.startsAt}`),
  ],
);

/**
 * One row per user a live visit or time-off entry holds for [starts_at, ends_at): the one place the
 * schedule_holds_no_overlap exclusion constraint (migration 0016, over company, user and the range, with
 * btree_gist) keeps any user from being held twice at a moment, whatever the number of writers. A visit
 * that is deleted, Completed, Cancelled or allowed to overlap has no rows here.
 */
export const scheduleHolds = pgTable(
  'schedule_holds',
  {
    ...tenantKey,
    userId: uuid('user_id').notNull(),
    startsAt: timestamptz('starts_at').notNull(),
    endsAt: timestamptz('ends_at').notNull(),
    visitUuid: uuid('visit_uuid'),
    timeOffUuid: uuid('time_off_uuid'),
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId, table.userId], foreignColumns: [users.companyId, users.uuid] }),
    foreignKey({ columns: [table.companyId, table.visitUuid], foreignColumns: [visits.companyId, visits.uuid] }).onDelete('cascade'),
    foreignKey({ columns: [table.companyId, table.timeOffUuid], foreignColumns: [timeOff.companyId, timeOff.uuid] }).onDelete('cascade'),
    index('schedule_holds_visit_idx').on(table.companyId, table.visitUuid).where(sql`${table.visitUuid} is not null`),
    index('schedule_holds_time_off_idx').on(table.companyId, table.timeOffUuid).where(sql`${table.timeOffUuid} is not null`),
    // Availability's reads, index only (the exclusion constraint's GiST index is slow to search by user): a
    // visit's holds by start (a visit lasts at most 24 hours, so a range bounds starts_at), time off by end.
    index('schedule_holds_visit_window_idx').on(table.companyId, table.userId, table.startsAt, table.endsAt).where(sql`${table.visitUuid} is not null`),
    index('schedule_holds_time_off_window_idx').on(table.companyId, table.userId, table.endsAt, table.startsAt).where(sql`${table.timeOffUuid} is not null`),
    check('schedule_holds_one_owner_check', sql`(${table.visitUuid} is null) <> (${table.timeOffUuid} is null)`),
    check('schedule_holds_interval_check', sql`${table.endsAt} > ${table.startsAt}`),
  ],
);

/**
 * A user's calendar feed links: the feed URL carries a random token, of which only the SHA-256 is kept.
 * Revoking deletes the user's rows; every feed request looks its token up, so a revoked link is gone on
 * every instance at once.
 */
export const calendarLinks = pgTable(
  'calendar_links',
  {
    ...tenantKey,
    userId: uuid('user_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    createdAt: lifecycle.createdAt,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId, table.userId], foreignColumns: [users.companyId, users.uuid] }),
    uniqueIndex('calendar_links_token_idx').on(table.tokenHash),
    index('calendar_links_user_idx').on(table.companyId, table.userId),
  ],
);
