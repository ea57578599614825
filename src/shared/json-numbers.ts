/**
 * JSON numbers whose text says more than a double holds. JSON.parse reads `1.00000000000000000001` as 1 and
 * `1e-400` as 0, so a rule checked on the parsed value (at most 2 decimals, an integer, not negative) would pass
 * a number whose text breaks it. Such a number is rewritten, before parsing, as the next double away from zero:
 * a value as long as a double's decimal text can be, which every numeric rule of a request refuses with its own
 * message (too many decimal places, not an integer, too large). In a free-form field it is stored one unit in
 * the last place from the nearest double, which the text could not be stored as exactly either.
 */

/**
 * Text that may hold such a number: 16 or more digits and points in a row (a double holds any decimal of 15
 * significant digits exactly), or an exponent. Anything else is left alone without a scan.
 */
const MAYBE_INEXACT = /\d[\d.]{15}|\d[eE]/;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** A number's text as digits and a power of ten, without leading or trailing zeros (`0` for zero). */
function canonical(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  let digits = (whole + fraction).replace(/^0+/, '');
  if (digits === '') return '0';
  let power = BigInt(exponent) - BigInt(fraction.length);
  const trimmed = digits.replace(/0+$/, '');
  power += BigInt(digits.length - trimmed.length);
  digits = trimmed;
  return `${sign}${digits}e${power}`;
}

/** The double next to `value`, away from zero. */
function nextAwayFromZero(value: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(value));
  view.setBigUint64(0, view.getBigUint64(0) + 1n);
  const next = view.getFloat64(0);
  return value < 0 || Object.is(value, -0) ? -next : next;
}

/** The JSON text of the replacement for a number token that no double holds exactly, or undefined if one does. */
function replacementOf(token: string): string | undefined {
  const parsed = Number(token);
  if (!Number.isFinite(parsed) || canonical(String(parsed)) === canonical(token)) return undefined;
  const next = nextAwayFromZero(parsed);
  // Past the largest double: a text JSON.parse reads as Infinity, which no numeric field takes.
  return Number.isFinite(next) ? String(next) : `${next < 0 ? '-' : ''}1e400`;
}

/** The JSON text with every number no double holds exactly replaced (see above); strings are left as sent. */
export function withExactNumbers(text: string): string {
  if (!MAYBE_INEXACT.test(text)) return text;
  let result = '';
  let copiedUpTo = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) continue;
    NUMBER.lastIndex = i;
    const token = NUMBER.exec(text)?.[0];
    if (!token) continue;
    const replacement = replacementOf(token);
    if (replacement !== undefined) {
      result += text.slice(copiedUpTo, i) + replacement;
      copiedUpTo = i + token.length;
    }
    i += token.length - 1;
  }
  return copiedUpTo === 0 ? text : result + text.slice(copiedUpTo);
}
