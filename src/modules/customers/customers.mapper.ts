import type { CustomerRow } from './customers.repository.js';
import type { CustomerResponse } from './customers.schemas.js';

/** A customer row as the API answers it; the field order is the JSON order (ETags hash it). */
export function toCustomerResponse(row: CustomerRow): CustomerResponse {
  return {
    uuid: row.uuid,
    first_name: row.firstName,
    last_name: row.lastName,
    company_name: row.companyName,
    email: row.email,
    phone: row.phone,
    customer_type: row.customerType,
    is_vip: row.isVip,
    physical_address1: row.physicalAddress1,
    physical_address2: row.physicalAddress2,
    physical_city: row.physicalCity,
    physical_state: row.physicalState,
    physical_zip: row.physicalZip,
    billing_address1: row.billingAddress1,
    billing_address2: row.billingAddress2,
    billing_city: row.billingCity,
    billing_state: row.billingState,
    billing_zip: row.billingZip,
    primary_service_location_uuid: row.primaryServiceLocationUuid,
    notes: row.notes,
    internal_flags: row.internalFlags,
    on_my_way_notify_via: row.onMyWayNotifyVia,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    deleted_at: row.deletedAt?.toISOString() ?? null,
  };
}
