import { toCents } from '../../shared/money.js';

/** An amount as printed on documents: thousands separators and two decimals (1,082.50), from exact cents. */
export function amountText(value: number | string): string {
  const cents = toCents(value);
  const sign = cents < 0 ? '-' : '';
  const absolute = Math.abs(cents);
  const whole = Math.floor(absolute / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${whole}.${String(absolute % 100).padStart(2, '0')}`;
}

export const dollars = (value: number | string) => `$${amountText(value)}`;

/**
 * A calendar date (YYYY-MM-DD) or a timestamp, as its date exactly as the JSON record has it (2026-11-22;
 * timestamps by their UTC date): one form for every reader, and the one a client finds in the record.
 */
export function dateText(value: string | null | undefined): string {
  if (!value) return '';
  const match = /^\d{4}-\d{2}-\d{2}/.exec(value);
  return match ? match[0] : value;
}

/** A quantity without trailing zeros (1, 2.5, 0.125). */
export function quantityText(value: number): string {
  return String(Number(value.toFixed(3)));
}

/** "Austin, TX 78701" from its parts, skipping empty ones. */
export function cityLine(city: string | null, state: string | null, zip: string | null): string {
  const region = [state, zip].filter(Boolean).join(' ');
  return [city, region].filter(Boolean).join(', ');
}

export function addressLines(...parts: Array<string | null | undefined>): string[] {
  return parts.filter((part): part is string => typeof part === 'string' && part.trim() !== '');
}

export const TIER_LABELS = { good: 'Good', better: 'Better', best: 'Best' } as const;
