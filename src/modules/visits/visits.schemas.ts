import { z } from 'zod';
import { VISIT_STATUSES } from '../../db/schema/index.js';
import { jobStatus } from '../jobs/jobs.schemas.js';
import { UserEmbed } from '../users/users.schemas.js';
import {
  calendarDate,
  longText,
  nullableString,
  queryBoolean,
  timeOfDay,
  timestampInput,
  timestampOutput,
  timezoneName,
  uuidString,
} from '../../shared/formats.js';
import { commaSeparatedEnum, pageQueryShape, syncQueryShape } from '../../shared/list-query.js';

export const MAX_ASSIGNED_USERS = 10;
export const MAX_ARRIVAL_WINDOW_MINUTES = 480;

export const visitStatus = z.enum(VISIT_STATUSES).meta({
  id: 'VisitStatus',
  description:
    'Where a visit stands: forward in the order Scheduled, Dispatched, En Route, On Site, Completed (skipping allowed); ' +
    'Cancelled from any status but Completed; Completed and Cancelled are final.',
});

/** Time input of both forms (DECISIONS §13): instants, or local date and times read in time_zone. */
const timeFields = {
  starts_at: timestampInput.optional().describe('When the visit starts: a timestamp with Z or an offset. Send with ends_at, or send the local fields instead.'),
  ends_at: timestampInput
    .optional()
    .describe('When the visit ends: after starts_at and at most 24 hours later.')
    .meta({ example: '2026-12-01T16:00:00.000Z' }),
  local_date: calendarDate
    .optional()
    .describe('The wall-clock date in time_zone (YYYY-MM-DD), with local_start_time and local_end_time instead of starts_at and ends_at.'),
  local_start_time: timeOfDay
    .optional()
    .describe('HH:MM on local_date in time_zone. A time skipped by a daylight-saving change is 400; a repeated one means its first occurrence.'),
  local_end_time: timeOfDay.optional().describe('HH:MM on local_date in time_zone, later than local_start_time.').meta({ example: '11:30' }),
};

const fields = {
  title: z.string().max(200, 'must be at most 200 characters').nullable().optional().describe('At most 200 characters; the feed shows the job title when null.').meta({ example: 'Install the new unit' }),
  instructions: longText().nullable().optional().describe('Notes for the technicians.').meta({ example: 'Gate code 4411; dog in the yard.' }),
  time_zone: timezoneName
    .optional()
    .describe("IANA time zone of the local fields. Default: the job's location's time zone, else the primary location's, else America/New_York. Changing it alone keeps the instants."),
  ...timeFields,
  arrival_window_minutes: z
    .number()
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .max(MAX_ARRIVAL_WINDOW_MINUTES, `must be at most ${MAX_ARRIVAL_WINDOW_MINUTES}`)
    .nullable()
    .optional()
    .describe('The customer is told the technician arrives between starts_at and starts_at plus this many minutes (0..480).')
    .meta({ example: 60 }),
  assigned_user_ids: z
    .array(uuidString)
    .max(MAX_ASSIGNED_USERS, `must have at most ${MAX_ASSIGNED_USERS} items`)
    .optional()
    .describe(`Up to ${MAX_ASSIGNED_USERS} distinct users of the company, order kept; default []. Replaces the whole list on update.`),
  allow_overlap: z
    .boolean()
    .optional()
    .describe('Default false. When true the visit is never refused for overlap and holds no one.'),
  status: visitStatus.optional().describe('Default Scheduled. The first move to a status sets its timestamp.').meta({ example: 'Scheduled' }),
};

export const CreateVisitBody = z
  .strictObject({ job_uuid: uuidString.describe('A live job of the company; cannot change later.'), ...fields })
  // The time is required in one of its two forms, not both (requestedInterval checks it, naming the field).
  .meta({
    id: 'CreateVisitBody',
    oneOf: [{ required: ['starts_at', 'ends_at'] }, { required: ['local_date', 'local_start_time', 'local_end_time'] }],
  });
export type CreateVisitBody = z.infer<typeof CreateVisitBody>;

export const UpdateVisitBody = z.strictObject(fields).partial().meta({ id: 'UpdateVisitBody' });
export type UpdateVisitBody = z.infer<typeof UpdateVisitBody>;

export const VISIT_SORTS = ['-created_at', 'created_at', '-updated_at', 'updated_at', 'starts_at', '-starts_at'] as const;
export type VisitSort = (typeof VISIT_SORTS)[number];

export const ListVisitsQuery = z.strictObject({
  ...pageQueryShape,
  updated_since: syncQueryShape.updated_since,
  sort: z
    .enum(VISIT_SORTS)
    .default('-created_at')
    .describe('Order: -created_at (default), created_at, -updated_at, updated_at, starts_at or -starts_at; ties by uuid in the same direction.')
    .meta({ example: 'starts_at' }),
  job_uuid: uuidString.optional().describe('Visits of this job.'),
  customer_uuid: uuidString.optional().describe("Visits of this customer's jobs."),
  location_uuid: uuidString.optional().describe("Visits of this location's jobs."),
  assigned_user_id: uuidString.optional().describe('Visits that include this user.'),
  unassigned: queryBoolean.optional().describe('true: visits with no one assigned; false: visits with someone.'),
  status: commaSeparatedEnum(VISIT_STATUSES, 'status', ['Scheduled', 'Dispatched'])
    .optional()
    .describe('One status or several, comma-separated (OR).'),
  from: timestampInput.optional().describe('With `to`: the visits whose [starts_at, ends_at) overlaps [from, to). Alone: the visits that end after it.'),
  to: timestampInput.optional().describe('With `from`: see from. Alone: the visits that start before it.').meta({ example: '2026-12-08T00:00:00.000Z' }),
});
export type ListVisitsQuery = z.infer<typeof ListVisitsQuery>;

export const VisitJobEmbed = z
  .object({ uuid: z.string(), title: z.string(), status: jobStatus })
  .meta({ id: 'VisitJob', description: 'The job of the visit.' });

export const VisitUserEmbed = UserEmbed.meta({ id: 'VisitAssignedUser' });

export const VisitResponse = z
  .object({
    uuid: z.string(),
    job_uuid: z.string(),
    customer_uuid: z.string().describe("The job's customer."),
    location_uuid: nullableString.describe("The job's location."),
    title: nullableString,
    instructions: nullableString,
    time_zone: z.string().meta({ example: 'America/Chicago' }),
    starts_at: timestampOutput,
    ends_at: timestampOutput,
    local_date: z.string().describe('The date of starts_at in time_zone.').meta({ format: 'date', example: '2026-12-01' }),
    local_start_time: z.string().describe('HH:MM of starts_at in time_zone.').meta({ example: '08:00' }),
    local_end_time: z.string().describe('HH:MM of ends_at in time_zone.').meta({ example: '10:00' }),
    arrival_window_minutes: z.number().int().nullable(),
    assigned_user_ids: z.array(z.string()),
    allow_overlap: z.boolean(),
    status: visitStatus,
    dispatched_at: timestampOutput.nullable(),
    en_route_at: timestampOutput.nullable(),
    arrived_at: timestampOutput.nullable(),
    completed_at: timestampOutput.nullable(),
    cancelled_at: timestampOutput.nullable(),
    created_at: timestampOutput,
    updated_at: timestampOutput,
    deleted_at: timestampOutput.nullable(),
    job: VisitJobEmbed,
    assigned_users: z.array(VisitUserEmbed).describe('The assigned users in the order of assigned_user_ids.'),
  })
  .meta({ id: 'Visit' });
export type VisitResponse = z.infer<typeof VisitResponse>;
