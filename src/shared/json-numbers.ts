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
 * significant digits exactly), or a number with an exponent where a value starts (after `:`, `,` or `[`, so
 * that the `1e` of a UUID is not one). Anything else, most bodies, is left alone without a scan.
 */
const MAYBE_INEXACT = /\d[\d.]{15}|[:,[]\s*-?\d+(?:\.\d+)?[eE]/;
/** A token this short without an exponent has at most 15 significant digits: its double holds it exactly. */
const ALWAYS_EXACT_LENGTH = 15;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** How many digits an exponent may have for its value to be exact in a double (up to 2^53). */
const SAFE_EXPONENT_DIGITS = 15;

/**
 * A number's text as digits and a power of ten, without leading or trailing zeros (`0` for zero); undefined for
 * an exponent of more than SAFE_EXPONENT_DIGITS digits, whose value no double comes near. Linear in the text:
 * a body may hold a number of a megabyte.
 */
function canonical(text: string): string | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const digits = whole + fraction;
  let first = 0;
  while (first < digits.length && digits.charCodeAt(first) === 0x30) first++;
  if (first === digits.length) return '0';
  let end = digits.length;
  while (digits.charCodeAt(end - 1) === 0x30) end--;
  if (exponent.replace(/^[+-]/, '').length > SAFE_EXPONENT_DIGITS) return undefined;
  const power = Number(exponent) - fraction.length + (digits.length - end);
  return `${sign}${digits.slice(first, end)}e${power}`;
}

/** The double next to `value`, away from zero. */
const bits = new DataView(new ArrayBuffer(8));

function nextAwayFromZero(value: number): number {
  const view = bits;
  view.setFloat64(0, Math.abs(value));
  view.setBigUint64(0, view.getBigUint64(0) + 1n);
  const next = view.getFloat64(0);
  return value < 0 || Object.is(value, -0) ? -next : next;
}

/** The JSON text of the replacement for a number token that no double holds exactly, or undefined if one does. */
function replacementOf(token: string): string | undefined {
  const parsed = Number(token);
  // Infinity is refused by every numeric field as it is; an exponent too long to be exact reads as 0 or Infinity.
  if (!Number.isFinite(parsed)) return undefined;
  const shortest = String(parsed);
  if (shortest === token || canonical(shortest) === canonical(token)) return undefined;
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
    const exact = token.length <= ALWAYS_EXACT_LENGTH && !/[eE]/.test(token);
    const replacement = exact ? undefined : replacementOf(token);
    if (replacement !== undefined) {
      result += text.slice(copiedUpTo, i) + replacement;
      copiedUpTo = i + token.length;
    }
    i += token.length - 1;
  }
  return copiedUpTo === 0 ? text : result + text.slice(copiedUpTo);
}
