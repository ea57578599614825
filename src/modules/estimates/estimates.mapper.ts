import { fromCents, moneyOut, toCents } from '../../shared/money.js';
import type { PricingType } from '../../db/schema/index.js';
import { ADJUSTABLE_AMOUNTS, type Adjustments } from './estimate-pricing.js';
import type { EstimateDetail, EstimateRow, EstimateWithCustomer } from './estimates.repository.js';
import type { EstimateListItem, EstimateResponse } from './estimates.schemas.js';

/** Adjustments as stored (exact decimal strings) or as given, to the JSON numbers the API shows. */
export function adjustmentsOut(adjustments: Adjustments | null): Record<string, number> | null {
  if (adjustments === null) return null;
  const out: Record<string, number> = {};
  for (const key of ADJUSTABLE_AMOUNTS) {
    const value = adjustments[key];
    if (value !== undefined) out[key] = fromCents(toCents(value));
  }
  return out;
}

/**
 * The estimate's own fields; the field order is the JSON order (ETags hash it). The share page's
 * signature (signature_name, signed_at) is stored with the estimate but is not part of its record.
 */
function estimateFields(row: EstimateRow): Omit<EstimateListItem, 'customer'> {
  return {
    uuid: row.uuid,
    estimate_number: row.estimateNumber,
    customer_uuid: row.customerUuid,
    job_uuid: row.jobUuid,
    template_uuid: row.templateUuid,
    location_uuid: row.locationUuid,
    created_by_user_id: row.createdByUserId,
    status: row.status,
    template_name: row.templateName,
    pricing_type: row.pricingType,
    selected_tier: row.selectedTier,
    base_amount: moneyOut(row.baseAmount),
    addons_amount: moneyOut(row.addonsAmount),
    tax_amount: moneyOut(row.taxAmount),
    total_amount: moneyOut(row.totalAmount),
    quantity: Number(row.quantity),
    selected_addons: row.selectedAddons,
    adjustments: adjustmentsOut(row.adjustments as Adjustments | null),
    service_description: row.serviceDescription,
    internal_notes: row.internalNotes,
    customer_notes: row.customerNotes,
    response_notes: row.responseNotes,
    expires_at: row.expiresAt?.toISOString() ?? null,
    responded_at: row.respondedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    deleted_at: row.deletedAt?.toISOString() ?? null,
  };
}

/** An estimate in a list: its fields and its customer. */
export function toEstimateListItem({ estimate, customer }: EstimateWithCustomer): EstimateListItem {
  return {
    ...estimateFields(estimate),
    customer: { uuid: customer.uuid, first_name: customer.firstName, last_name: customer.lastName },
  };
}

/** An estimate as its GET answers it: the list item plus its job, template and location. */
export function toEstimateResponse(detail: EstimateDetail): EstimateResponse {
  const { job, template, location } = detail;
  return {
    ...toEstimateListItem(detail),
    job: job && { uuid: job.uuid, title: job.title, status: job.status },
    // The detail query reads the column as text; it only ever holds a PricingType.
    template: { uuid: template.uuid, name: template.name, pricing_type: template.pricingType as PricingType },
    location: location && { uuid: location.uuid, name: location.name },
  };
}
