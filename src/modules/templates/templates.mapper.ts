import { moneyOut } from '../../shared/money.js';
import type { TemplateRow } from './templates.repository.js';
import type { TemplateResponse } from './templates.schemas.js';

/**
 * A template as the API answers it. The field order is the JSON order (ETags hash it): the priced
 * jsonb fields and the tax rate come last.
 */
export function toTemplateResponse(row: TemplateRow): TemplateResponse {
  const { tiers } = row;
  return {
    uuid: row.uuid,
    name: row.name,
    description: row.description,
    pricing_type: row.pricingType,
    base_price: row.basePrice === null ? null : moneyOut(row.basePrice),
    is_active: row.isActive,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    deleted_at: row.deletedAt?.toISOString() ?? null,
    tiers: tiers && { good: moneyOut(tiers.good), better: moneyOut(tiers.better), best: moneyOut(tiers.best) },
    addons: row.addons.map((addon) => ({ id: addon.id, name: addon.name, price: moneyOut(addon.price) })),
    tax_rate: Number(row.taxRate),
  };
}
