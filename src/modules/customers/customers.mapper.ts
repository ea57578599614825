import { customers } from '../../db/schema/index.js';
import type { ApiFields } from '../../db/perf/api-rows.js';
import type { CustomerResponse } from './customers.schemas.js';

/** A customers row as the database answers it (customers.repository.ts names it CustomerRow too). */
type CustomerRow = typeof customers.$inferSelect;

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

/**
 * The same record read in its API form (src/db/perf/api-rows.ts): each field of toCustomerResponse, in its
 * order, and the column it comes from. GETs and list pages read customers this way; test/api-rows.test.ts
 * holds the two to the same JSON.
 */
export const customerApiFields = {
  uuid: customers.uuid,
  first_name: customers.firstName,
  last_name: customers.lastName,
  company_name: customers.companyName,
  email: customers.email,
  phone: customers.phone,
  customer_type: customers.customerType,
  is_vip: customers.isVip,
  physical_address1: customers.physicalAddress1,
  physical_address2: customers.physicalAddress2,
  physical_city: customers.physicalCity,
  physical_state: customers.physicalState,
  physical_zip: customers.physicalZip,
  billing_address1: customers.billingAddress1,
  billing_address2: customers.billingAddress2,
  billing_city: customers.billingCity,
  billing_state: customers.billingState,
  billing_zip: customers.billingZip,
  primary_service_location_uuid: customers.primaryServiceLocationUuid,
  notes: customers.notes,
  internal_flags: customers.internalFlags,
  on_my_way_notify_via: customers.onMyWayNotifyVia,
  created_at: customers.createdAt,
  updated_at: customers.updatedAt,
  deleted_at: customers.deletedAt,
} satisfies ApiFields & Record<keyof CustomerResponse, unknown>;
