import { centsToDecimal, moneyOut, toCents } from './money.js';

/** Conversions between API records (snake_case JSON) and rows (camelCase columns), in one place. */

const camelCache = new Map<string, string>();
const snakeCache = new Map<string, string>();

export function snakeToCamel(key: string): string {
  let camel = camelCache.get(key);
  if (camel === undefined) {
    camel = key.replace(/_([a-z0-9])/g, (_, char: string) => char.toUpperCase());
    camelCache.set(key, camel);
  }
  return camel;
}

export function camelToSnake(key: string): string {
  let snake = snakeCache.get(key);
  if (snake === undefined) {
    snake = key.replace(/([A-Z])/g, '_$1').replace(/([a-z])(\d)/g, '$1$2').toLowerCase();
    snakeCache.set(key, snake);
  }
  return snake;
}

export interface RecordShape {
  /** Columns never returned (company_id, search_text, storage keys, ...). */
  omit?: readonly string[];
  /** numeric columns returned as JSON numbers. */
  money?: readonly string[];
  /** Column name -> API field name where they differ. */
  rename?: Readonly<Record<string, string>>;
}

const ALWAYS_OMIT = new Set(['companyId', 'searchText']);

/** A row to its API record: snake_case keys, ISO timestamps in UTC, numerics as numbers. */
export function rowToRecord(row: Record<string, unknown>, shape: RecordShape = {}): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const key of Object.keys(row)) {
    if (ALWAYS_OMIT.has(key) || shape.omit?.includes(key)) continue;
    const value = row[key];
    const field = shape.rename?.[key] ?? camelToSnake(key);
    if (value instanceof Date) record[field] = value.toISOString();
    else if (typeof value === 'string' && shape.money?.includes(key)) record[field] = moneyOut(value);
    else record[field] = value ?? null;
  }
  return record;
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
