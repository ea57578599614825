/**
 * Money is integer cents inside the service. Decimal inputs are parsed from their exact decimal text,
 * never multiplied as binary floats, and every rounding is half away from zero.
 */

export type Cents = number;

/** Largest amount numeric(12,2) can hold, in cents. */
export const MAX_CENTS = 999_999_999_999;

/** The shortest decimal text of a finite number, without exponent notation. */
export function decimalText(value: number | string): string {
  if (typeof value === 'string') return value.trim();
  if (!Number.isFinite(value)) throw new RangeError('not a finite number');
  const text = String(value);
  if (!/e/i.test(text)) return text;
  // Exponent notation only appears for very large or very small numbers; expand it exactly.
  const [mantissa, exponentText] = text.toLowerCase().split('e');
  const exponent = Number(exponentText);
  const negative = mantissa.startsWith('-');
  const [intPart, fracPart = ''] = mantissa.replace('-', '').split('.');
  const digits = intPart + fracPart;
  const pointAt = intPart.length + exponent;
  let expanded: string;
  if (pointAt <= 0) expanded = `0.${'0'.repeat(-pointAt)}${digits}`;
  else if (pointAt >= digits.length) expanded = digits + '0'.repeat(pointAt - digits.length);
  else expanded = `${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
  return (negative ? '-' : '') + expanded;
}

/** Number of digits after the decimal point in the exact decimal text of a value. */
export function decimalPlaces(value: number | string): number {
  const text = decimalText(value);
  const point = text.indexOf('.');
  return point === -1 ? 0 : text.length - point - 1;
}

/** Parses a decimal (number or numeric string) into an integer scaled by 10^scale; throws if it has more places. */
export function toScaled(value: number | string, scale: number): bigint {
  const text = decimalText(value);
  const match = /^(-)?(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match) throw new RangeError(`not a decimal: ${text}`);
  const [, sign, intPart = '', fracPartRaw = ''] = match;
  const fracPart = fracPartRaw.replace(/0+$/, '');
  if (fracPart.length > scale) throw new RangeError(`more than ${scale} decimal places: ${text}`);
  const scaled = BigInt((intPart || '0') + fracPart.padEnd(scale, '0'));
  return sign ? -scaled : scaled;
}

export function toCents(value: number | string): Cents {
  return Number(toScaled(value, 2));
}


/** Cents to the JSON number the API returns (at most 2 decimals). */
export function fromCents(cents: Cents): number {
  return cents / 100;
}


/** A numeric column's string to the JSON number the API returns. */
export function moneyOut(value: string): number {
  return fromCents(toCents(value));
}


/** Cents as the decimal string stored in numeric(12,2). */
export function centsToDecimal(cents: Cents): string {
  const negative = cents < 0;
  const abs = Math.abs(cents);
  const text = `${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
  return negative ? `-${text}` : text;
}

/** Integer division rounding half away from zero. */
export function divideRounded(numerator: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new RangeError('division by zero');
  const negative = numerator < 0n !== denominator < 0n;
  const num = numerator < 0n ? -numerator : numerator;
  const den = denominator < 0n ? -denominator : denominator;
  const quotient = (num * 2n + den) / (den * 2n);
  return negative ? -quotient : quotient;
}

/** cents x a decimal factor given with `scale` places, rounded half away from zero to cents. */
export function multiplyCents(cents: Cents, factor: number | string, scale: number): Cents {
  const scaledFactor = toScaled(factor, scale);
  return Number(divideRounded(BigInt(cents) * scaledFactor, 10n ** BigInt(scale)));
}

/** cents x percent / 100 (percent with up to 4 decimals), rounded half away from zero to cents. */
export function percentOf(cents: Cents, percent: number | string): Cents {
  const scaledPercent = toScaled(percent, 4);
  return Number(divideRounded(BigInt(cents) * scaledPercent, 100n * 10_000n));
}

export function sumCents(values: Cents[]): Cents {
  return values.reduce((total, value) => total + value, 0);
}
