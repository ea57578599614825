import { z } from 'zod';
import { CustomerResponse } from '../customers/customers.schemas.js';
import { UserEmbed } from '../users/users.schemas.js';
import {
  calendarDate,
  longText,
  moneyInput,
  nullableString,
  requiredText,
  shortText,
  timeOfDay,
  timestampOutput,
  usState,
  uuidString,
  zipCode,
} from '../../shared/formats.js';
import { commaSeparatedEnum, listQueryShape, searchQuery } from '../../shared/list-query.js';
import { JOB_PRIORITIES, JOB_STATUSES } from '../../db/schema/index.js';

export const jobStatus = z.enum(JOB_STATUSES).meta({ id: 'JobStatus', description: 'Where a job stands.' });
const jobPriority = z.enum(JOB_PRIORITIES).meta({ id: 'JobPriority', description: 'How soon a job must be done.' });

/** Fields a client may send; every other job field is computed or read-only. */
const fields = {
  job_number: shortText(100).nullable().optional().describe("The client's own job number, free text.").meta({ example: 'J-1042' }),
  customer_uuid: uuidString.describe('A live customer of the company.'),
  location_uuid: uuidString.nullable().optional().describe('A live location of the company.'),
  assigned_to_user_id: uuidString.nullable().optional().describe('A user of the company.'),
  title: requiredText().describe('Short title.').meta({ example: 'Replace water heater' }),
  description: longText().nullable().optional().describe('What the job is about.'),
  status: jobStatus.optional().describe(`Default New. One of: ${JOB_STATUSES.join(', ')}.`).meta({ example: 'Scheduled' }),
  priority: jobPriority.optional().describe('Low, Normal, High or Emergency; default Normal.').meta({ example: 'Normal' }),
  is_urgent: z.boolean().optional().describe('Default false.'),
  is_emergency: z.boolean().optional().describe('Default false.'),
  service_address1: shortText().nullable().optional().describe('Service street address.').meta({ example: '12 Elm St' }),
  service_address2: shortText().nullable().optional().describe('Service suite, unit.'),
  service_city: shortText(100).nullable().optional().describe('Service city.').meta({ example: 'Austin' }),
  service_state: usState.nullable().optional().describe('Service state, 2-letter US code.'),
  service_zip: zipCode.nullable().optional().describe('Service ZIP.'),
  estimated_amount: moneyInput.nullable().optional().describe('Money: at most 2 decimals, never negative.'),
  actual_amount: moneyInput.nullable().optional().describe('Money: at most 2 decimals, never negative.'),
  scheduled_date: calendarDate.nullable().optional().describe('YYYY-MM-DD.'),
  scheduled_time_start: timeOfDay.nullable().optional().describe('HH:MM, 24-hour.'),
  scheduled_time_end: timeOfDay.nullable().optional().describe('HH:MM, 24-hour.').meta({ example: '11:00' }),
  internal_notes: longText().nullable().optional().describe('Internal notes.'),
  customer_notes: longText().nullable().optional().describe('Customer-facing notes.'),
};

export const CreateJobBody = z.strictObject(fields).meta({ id: 'CreateJobBody' });
export type CreateJobBody = z.infer<typeof CreateJobBody>;

export const UpdateJobBody = z.strictObject(fields).partial().meta({ id: 'UpdateJobBody' });
export type UpdateJobBody = z.infer<typeof UpdateJobBody>;

/** `status=New,Scheduled`: each value must be a known status. */
const statusListQuery = commaSeparatedEnum(JOB_STATUSES, 'status', ['Scheduled', 'In Progress']).optional();

export const ListJobsQuery = z.strictObject({
  ...listQueryShape,
  status: statusListQuery.describe('One status or several, comma-separated (OR): `status=Scheduled,In Progress`.'),
  location_uuid: uuidString.optional().describe('Jobs at this location.'),
  customer_uuid: uuidString.optional().describe('Jobs of this customer.'),
  assigned_to_user_id: uuidString.optional().describe('Jobs assigned to this user.'),
  priority: jobPriority.optional().describe('Low, Normal, High or Emergency.'),
  search: searchQuery.describe('Case-insensitive substring of title, description or job_number.'),
});
export type ListJobsQuery = z.infer<typeof ListJobsQuery>;

export const JobCustomerEmbed = CustomerResponse.pick({
  uuid: true,
  first_name: true,
  last_name: true,
  company_name: true,
  email: true,
  phone: true,
}).meta({ id: 'JobCustomer' });
export type JobCustomerEmbed = z.infer<typeof JobCustomerEmbed>;

export const JobLocationEmbed = z.object({ uuid: z.string(), name: z.string() }).meta({ id: 'JobLocation' });
export type JobLocationEmbed = z.infer<typeof JobLocationEmbed>;

export const JobUserEmbed = UserEmbed.meta({ id: 'JobAssignedUser' });
export type JobUserEmbed = z.infer<typeof JobUserEmbed>;

const jobShape = {
  uuid: z.string(),
  job_number: nullableString,
  customer_uuid: z.string(),
  location_uuid: nullableString,
  assigned_to_user_id: nullableString,
  title: z.string(),
  description: nullableString,
  status: jobStatus,
  priority: jobPriority,
  is_urgent: z.boolean(),
  is_emergency: z.boolean(),
  service_address1: nullableString,
  service_address2: nullableString,
  service_city: nullableString,
  service_state: nullableString,
  service_zip: nullableString,
  estimated_amount: z.number().nullable(),
  actual_amount: z.number().nullable(),
  scheduled_date: nullableString,
  scheduled_time_start: nullableString,
  scheduled_time_end: nullableString,
  started_at: timestampOutput.nullable(),
  completed_at: timestampOutput.nullable(),
  invoiced_at: timestampOutput.nullable(),
  paid_at: timestampOutput.nullable(),
  internal_notes: nullableString,
  customer_notes: nullableString,
  created_at: timestampOutput,
  updated_at: timestampOutput,
  deleted_at: timestampOutput.nullable(),
  customer: JobCustomerEmbed,
};

/** A job as listed: every field plus the embedded customer. */
export const JobListItem = z.object(jobShape).meta({ id: 'JobListItem' });
export type JobListItem = z.infer<typeof JobListItem>;

/** A single job: the listed shape plus location and assigned user. */
export const JobResponse = z
  .object({ ...jobShape, location: JobLocationEmbed.nullable(), assigned_user: JobUserEmbed.nullable() })
  .meta({ id: 'Job' });
export type JobResponse = z.infer<typeof JobResponse>;
