import { invalidField } from '../../errors.js';
import { MAX_CENTS, multiplyCents, percentOf, sumCents, toCents, type Cents } from '../../shared/money.js';
import type { TemplatePrices } from '../templates/templates.service.js';
import type { Tier } from '../../db/schema/index.js';

/**
 * The one estimate arithmetic (DECISIONS.md §6), shared by create, update and preview. Everything is
 * integer cents; each multiplication rounds half away from zero to cents.
 */

export const ADJUSTABLE_AMOUNTS = ['base_amount', 'addons_amount', 'tax_amount'] as const;
export type AdjustableAmount = (typeof ADJUSTABLE_AMOUNTS)[number];

/** Manual amounts that replace computed ones; values are numbers (API) or decimal strings (stored). */
export type Adjustments = Partial<Record<AdjustableAmount, number | string>>;

export interface PricingInput {
  selectedTier: Tier | null;
  /** Up to 3 decimals, as a number or the stored decimal text. */
  quantity: number | string;
  selectedAddons: string[] | null;
  adjustments: Adjustments | null;
}

export interface EstimateAmounts {
  base_amount: Cents;
  addons_amount: Cents;
  tax_amount: Cents;
  total_amount: Cents;
}

export interface EstimatePricing {
  amounts: EstimateAmounts;
  /** The tier price or base_price, before quantity. */
  unitPrice: Cents;
  /** unit price x quantity, before any adjustment. */
  computedBase: Cents;
  addons: Array<{ id: string; name: string; price: Cents }>;
}

function unitPriceOf(template: TemplatePrices, selectedTier: Tier | null): Cents {
  if (template.pricingType === 'tiered') {
    if (selectedTier === null) throw invalidField('selected_tier', 'is required for a tiered template (good, better or best)', 'required');
    return template.tiers![selectedTier];
  }
  if (selectedTier !== null) throw invalidField('selected_tier', 'must be absent or null for a flat template');
  return template.basePrice!;
}

function selectedAddonsOf(template: TemplatePrices, ids: string[]) {
  return ids.map((id, index) => {
    const addon = template.addons.find((candidate) => candidate.id === id);
    if (!addon) throw invalidField(`selected_addons[${index}]`, `"${id}" is not an add-on of the template`, 'invalid_reference');
    return addon;
  });
}

function adjusted(adjustments: Adjustments | null, key: AdjustableAmount, computed: Cents): Cents {
  const value = adjustments?.[key];
  return value === undefined ? computed : toCents(value);
}

function withinRange(amount: Cents, field: string, message = 'makes the amount too large'): Cents {
  if (amount > MAX_CENTS) throw invalidField(field, message, 'out_of_range');
  return amount;
}

export function priceEstimate(template: TemplatePrices, input: PricingInput): EstimatePricing {
  const unitPrice = unitPriceOf(template, input.selectedTier);
  const computedBase = withinRange(multiplyCents(unitPrice, input.quantity, 3), 'quantity');
  const addons = selectedAddonsOf(template, input.selectedAddons ?? []);

  const base = adjusted(input.adjustments, 'base_amount', computedBase);
  const addonsAmount = withinRange(adjusted(input.adjustments, 'addons_amount', sumCents(addons.map((addon) => addon.price))), 'selected_addons');
  const tax = adjusted(input.adjustments, 'tax_amount', percentOf(base + addonsAmount, template.taxRate));
  // The sum of amounts each in range: the total itself is what is too large (as an invoice's), whatever made it.
  const total = withinRange(base + addonsAmount + tax, 'total_amount', 'is too large');

  return {
    amounts: { base_amount: base, addons_amount: addonsAmount, tax_amount: tax, total_amount: total },
    unitPrice,
    computedBase,
    addons,
  };
}
