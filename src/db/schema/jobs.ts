import { bigint, boolean, date, foreignKey, index, numeric, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { users } from './companies.js';
import { lifecycle, listIndexes, searchText, tenantKey, timestamptz } from './columns.js';
import { customers } from './customers.js';
import { locations } from './locations.js';

/** The values these tables store: the API schemas and the rules take them from here. */
export const JOB_STATUSES = [
  'New',
  'Contacted',
  'Scheduled',
  'In Progress',
  'Needs Approval',
  'Ready to Invoice',
  'Invoiced',
  'Complete',
  'Estimate Sent',
  'Estimate Approved',
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const JOB_PRIORITIES = ['Low', 'Normal', 'High', 'Emergency'] as const;
export type JobPriority = (typeof JOB_PRIORITIES)[number];

export const PHOTO_TYPES = ['before', 'during', 'after'] as const;
export type PhotoType = (typeof PHOTO_TYPES)[number];

export const jobs = pgTable(
  'jobs',
  {
    ...tenantKey,
    jobNumber: text('job_number'),
    customerUuid: uuid('customer_uuid').notNull(),
    locationUuid: uuid('location_uuid'),
    assignedToUserId: uuid('assigned_to_user_id'),
    title: text('title').notNull(),
    description: text('description'),
    status: text('status').$type<JobStatus>().notNull().default('New'),
    priority: text('priority').$type<JobPriority>().notNull().default('Normal'),
    isUrgent: boolean('is_urgent').notNull().default(false),
    isEmergency: boolean('is_emergency').notNull().default(false),
    serviceAddress1: text('service_address1'),
    serviceAddress2: text('service_address2'),
    serviceCity: text('service_city'),
    serviceState: text('service_state'),
    serviceZip: text('service_zip'),
    estimatedAmount: numeric('estimated_amount', { precision: 12, scale: 2 }),
    actualAmount: numeric('actual_amount', { precision: 12, scale: 2 }),
    scheduledDate: date('scheduled_date', { mode: 'string' }),
    scheduledTimeStart: text('scheduled_time_start'),
    scheduledTimeEnd: text('scheduled_time_end'),
    startedAt: timestamptz('started_at'),
    completedAt: timestamptz('completed_at'),
    invoicedAt: timestamptz('invoiced_at'),
    paidAt: timestamptz('paid_at'),
    internalNotes: text('internal_notes'),
    customerNotes: text('customer_notes'),
    searchText: text('search_text').generatedAlwaysAs(searchText('title', 'description', 'job_number')),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId, table.customerUuid], foreignColumns: [customers.companyId, customers.uuid] }),
    foreignKey({ columns: [table.companyId, table.locationUuid], foreignColumns: [locations.companyId, locations.uuid] }),
    foreignKey({ columns: [table.companyId, table.assignedToUserId], foreignColumns: [users.companyId, users.uuid] }),
    ...listIndexes('jobs', table, { status: table.status, customer: table.customerUuid, location: table.locationUuid, assignee: table.assignedToUserId }),
    index('jobs_search_idx').using('gin', table.companyId, table.searchText.op('gin_trgm_ops')),
  ],
);

export const jobPhotos = pgTable(
  'job_photos',
  {
    ...tenantKey,
    jobUuid: uuid('job_uuid').notNull(),
    userId: uuid('user_id').notNull(),
    storageKey: text('storage_key').notNull(),
    photoType: text('photo_type').$type<PhotoType>().notNull(),
    fileName: text('file_name'),
    fileSize: bigint('file_size', { mode: 'number' }),
    mimeType: text('mime_type'),
    takenAt: timestamptz('taken_at'),
    customerEmailSent: boolean('customer_email_sent').notNull().default(false),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId, table.jobUuid], foreignColumns: [jobs.companyId, jobs.uuid] }),
    foreignKey({ columns: [table.companyId, table.userId], foreignColumns: [users.companyId, users.uuid] }),
    index('job_photos_job_order_idx').on(table.companyId, table.jobUuid, table.createdAt.desc().nullsFirst(), table.uuid.desc().nullsFirst()),
    index('job_photos_job_sync_idx').on(table.companyId, table.jobUuid, table.updatedAt, table.uuid),
  ],
);
