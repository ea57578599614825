import type { LocationRow } from './locations.repository.js';
import type { LocationResponse } from './locations.schemas.js';

/** A location row as the API answers it; the field order is the JSON order (ETags hash it). */
export function toLocationResponse(row: LocationRow): LocationResponse {
  return {
    uuid: row.uuid,
    name: row.name,
    location_code: row.locationCode,
    address1: row.address1,
    address2: row.address2,
    city: row.city,
    state: row.state,
    zip: row.zip,
    phone: row.phone,
    timezone: row.timezone,
    business_hours: row.businessHours,
    default_tax_rules: row.defaultTaxRules,
    service_types_offered: row.serviceTypesOffered,
    default_pricing_set_uuid: row.defaultPricingSetUuid,
    is_primary: row.isPrimary,
    is_active: row.isActive,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    deleted_at: row.deletedAt?.toISOString() ?? null,
  };
}
