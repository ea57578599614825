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

interface FieldPlan {
  key: string;
  field: string;
  money: boolean;
}

/** The field plan of one row layout under one shape, worked out once: rows of a query share it. */
interface CompiledShape {
  keys: string[];
  plan: FieldPlan[];
}

const NO_SHAPE: RecordShape = {};
const compiledShapes = new WeakMap<RecordShape, CompiledShape[]>();
/** Row layouts remembered per shape (a shape may serve a few queries' rows). */
const LAYOUTS_PER_SHAPE = 8;

function sameKeys(row: Record<string, unknown>, keys: string[]): boolean {
  let index = 0;
  for (const key in row) {
    if (keys[index] !== key) return false;
    index++;
  }
  return index === keys.length;
}

function planFor(row: Record<string, unknown>, shape: RecordShape): FieldPlan[] {
  let layouts = compiledShapes.get(shape);
  if (!layouts) {
    layouts = [];
    compiledShapes.set(shape, layouts);
  }
  for (const layout of layouts) if (sameKeys(row, layout.keys)) return layout.plan;
  const keys = Object.keys(row);
  const plan = keys
    .filter((key) => !ALWAYS_OMIT.has(key) && !shape.omit?.includes(key))
    .map((key) => ({ key, field: shape.rename?.[key] ?? camelToSnake(key), money: shape.money?.includes(key) ?? false }));
  if (layouts.length >= LAYOUTS_PER_SHAPE) layouts.shift();
  layouts.push({ keys, plan });
  return plan;
}

/**
 * A row to its API record: snake_case keys, ISO timestamps in UTC, numerics as numbers. Pass the shape
 * as a module constant: its field plan is then worked out once.
 */
export function rowToRecord(row: Record<string, unknown>, shape: RecordShape = NO_SHAPE): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const { key, field, money } of planFor(row, shape)) {
    const value = row[key];
    if (value instanceof Date) record[field] = value.toISOString();
    else if (money && typeof value === 'string') record[field] = moneyOut(value);
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
