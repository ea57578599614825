import { moneyOut } from '../../shared/money.js';
import type { JobCustomerRow, JobRow, JobWithCustomer, JobWithRelations } from './jobs.repository.js';
import type { JobCustomerEmbed, JobListItem, JobResponse } from './jobs.schemas.js';

function toJobCustomerEmbed(row: JobCustomerRow): JobCustomerEmbed {
  return {
    uuid: row.uuid,
    first_name: row.firstName,
    last_name: row.lastName,
    company_name: row.companyName,
    email: row.email,
    phone: row.phone,
  };
}

/** The job's own fields; the field order is the JSON order (ETags hash it). */
function jobFields(row: JobRow): Omit<JobListItem, 'customer'> {
  return {
    uuid: row.uuid,
    job_number: row.jobNumber,
    customer_uuid: row.customerUuid,
    location_uuid: row.locationUuid,
    assigned_to_user_id: row.assignedToUserId,
    title: row.title,
    description: row.description,
    status: row.status,
    priority: row.priority,
    is_urgent: row.isUrgent,
    is_emergency: row.isEmergency,
    service_address1: row.serviceAddress1,
    service_address2: row.serviceAddress2,
    service_city: row.serviceCity,
    service_state: row.serviceState,
    service_zip: row.serviceZip,
    estimated_amount: row.estimatedAmount === null ? null : moneyOut(row.estimatedAmount),
    actual_amount: row.actualAmount === null ? null : moneyOut(row.actualAmount),
    scheduled_date: row.scheduledDate,
    scheduled_time_start: row.scheduledTimeStart,
    scheduled_time_end: row.scheduledTimeEnd,
    started_at: row.startedAt?.toISOString() ?? null,
    completed_at: row.completedAt?.toISOString() ?? null,
    invoiced_at: row.invoicedAt?.toISOString() ?? null,
    paid_at: row.paidAt?.toISOString() ?? null,
    internal_notes: row.internalNotes,
    customer_notes: row.customerNotes,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    deleted_at: row.deletedAt?.toISOString() ?? null,
  };
}

/** A job in a list: its fields and its customer. */
export function toJobListItem({ job, customer }: JobWithCustomer): JobListItem {
  return { ...jobFields(job), customer: toJobCustomerEmbed(customer) };
}

/** A job as its GET answers it: the list item plus its location and assigned user. */
export function toJobResponse(found: JobWithRelations): JobResponse {
  const { location, assignedUser } = found;
  return {
    ...toJobListItem(found),
    location: location && { uuid: location.uuid, name: location.name },
    assigned_user: assignedUser && { id: assignedUser.id, first_name: assignedUser.firstName, last_name: assignedUser.lastName },
  };
}
