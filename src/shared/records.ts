import { centsToDecimal, toCents } from './money.js';

/**
 * Request bodies (snake_case JSON) to column values (camelCase). The way back, row to response, is
 * written out per resource in its <resource>.mapper.ts so the compiler checks it against the schema.
 */

const camelCache = new Map<string, string>();

export function snakeToCamel(key: string): string {
  let camel = camelCache.get(key);
  if (camel === undefined) {
    camel = key.replace(/_([a-z0-9])/g, (_, char: string) => char.toUpperCase());
    camelCache.set(key, camel);
  }
  return camel;
}

/**
 * The fields present in a validated body as column values: absent fields are left out (unchanged on
 * update), null stays null (clears), money becomes the exact decimal string of its cents.
 */
export function bodyToColumns(
  body: Record<string, unknown>,
  options: { money?: readonly string[]; skip?: readonly string[] } = {},
): Record<string, unknown> {
  const columns: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    if (value === undefined || options.skip?.includes(field)) continue;
    if (typeof value === 'number' && options.money?.includes(field)) {
      columns[snakeToCamel(field)] = centsToDecimal(toCents(value));
    } else {
      columns[snakeToCamel(field)] = value;
    }
  }
  return columns;
}
