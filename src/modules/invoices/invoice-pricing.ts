import { invalidField } from '../../errors.js';
import type { InvoiceType, PricedLine } from '../../db/schema/index.js';
import { type Cents, fromCents, MAX_CENTS, multiplyCents, percentOf, sumCents, toCents } from '../../shared/money.js';

/**
 * The one invoice arithmetic (DECISIONS.md §6), shared by create and preview so both give identical
 * numbers for one input. Everything is integer cents; each step rounds half away from zero.
 */

export interface LineItemInput {
  description?: string | null;
  quantity?: number;
  unit_price: number;
  tax_rate?: number;
}

export interface PricingInput {
  line_items?: LineItemInput[] | null;
  subtotal?: number;
  tax_amount?: number;
  discount_amount?: number;
  invoice_type?: InvoiceType;
  progress_percentage?: number | null;
}

/** The full amounts an invoice bills when the body has neither line items nor a subtotal. */
export interface AmountSource {
  subtotal: Cents;
  tax: Cents;
}

export const NO_AMOUNT: AmountSource = { subtotal: 0, tax: 0 };

export interface InvoicePricing {
  /** The priced lines, or null when the invoice has no line items. */
  lines: PricedLine[] | null;
  subtotal: Cents;
  tax: Cents;
  discount: Cents;
  total: Cents;
}

/** Whether the amounts come from the job or the estimate (no line items and no subtotal in the body). */
export function needsAmountSource(input: PricingInput): boolean {
  return !input.line_items && input.subtotal === undefined;
}

function requireWithinLimit(field: string, cents: Cents): Cents {
  if (cents > MAX_CENTS) throw invalidField(field, 'is too large', 'out_of_range');
  return cents;
}

function priceLine(item: LineItemInput, index: number): { line: PricedLine; totalCents: Cents; taxCents: Cents } {
  const quantity = item.quantity ?? 1;
  const taxRate = item.tax_rate ?? 0;
  const totalCents = requireWithinLimit(`line_items[${index}]`, multiplyCents(toCents(item.unit_price), quantity, 3));
  const taxCents = percentOf(totalCents, taxRate);
  return {
    line: {
      description: item.description ?? null,
      quantity,
      unit_price: item.unit_price,
      line_total: fromCents(totalCents),
      tax_rate: taxRate,
      tax_amount: fromCents(taxCents),
    },
    totalCents,
    taxCents,
  };
}

/** The progress share in percent, or null for Full and Partial invoices. */
function progressShare(input: PricingInput): number | null {
  const isProgress = input.invoice_type === 'Progress';
  const percentage = input.progress_percentage ?? null;
  if (!isProgress && percentage !== null) {
    throw invalidField('progress_percentage', 'is only accepted on a Progress invoice');
  }
  if (isProgress && percentage === null) {
    throw invalidField('progress_percentage', 'is required on a Progress invoice (greater than 0, at most 100)', 'required');
  }
  if (percentage !== null && (percentage <= 0 || percentage > 100)) {
    throw invalidField('progress_percentage', 'must be greater than 0 and at most 100', 'out_of_range');
  }
  return percentage;
}

function fullAmounts(input: PricingInput, source: AmountSource) {
  if (input.line_items) {
    const priced = input.line_items.map(priceLine);
    const subtotal = requireWithinLimit('line_items', sumCents(priced.map((p) => p.totalCents)));
    if (input.subtotal !== undefined && toCents(input.subtotal) !== subtotal) {
      throw invalidField('subtotal', `must equal the sum of the line totals (${fromCents(subtotal)}) or be omitted`);
    }
    const lineTax = sumCents(priced.map((p) => p.taxCents));
    const tax = input.tax_amount !== undefined ? toCents(input.tax_amount) : lineTax;
    return { lines: priced.map((p) => p.line), subtotal, tax };
  }
  const subtotal = input.subtotal !== undefined ? toCents(input.subtotal) : source.subtotal;
  const givenTax = input.tax_amount !== undefined ? toCents(input.tax_amount) : null;
  const tax = givenTax ?? (input.subtotal !== undefined ? 0 : source.tax);
  return { lines: null, subtotal, tax };
}

/**
 * Prices an invoice. Subtotal: the line totals, else the given subtotal, else `source` (the estimate or
 * the job). Tax: tax_amount when given, else the line taxes, else the source's tax. A Progress invoice
 * bills its percentage of subtotal and of tax (each rounded) before the discount, which may not exceed
 * subtotal + tax of what is billed.
 */
export function priceInvoice(input: PricingInput, source: AmountSource = NO_AMOUNT): InvoicePricing {
  const share = progressShare(input);
  const full = fullAmounts(input, source);
  const subtotal = share === null ? full.subtotal : percentOf(full.subtotal, share);
  const tax = share === null ? full.tax : percentOf(full.tax, share);
  const discount = input.discount_amount !== undefined ? toCents(input.discount_amount) : 0;
  if (discount > subtotal + tax) {
    throw invalidField('discount_amount', `must not exceed subtotal + tax_amount (${fromCents(subtotal + tax)})`, 'out_of_range');
  }
  const total = requireWithinLimit('total_amount', subtotal + tax - discount);
  return { lines: full.lines, subtotal, tax, discount, total };
}
