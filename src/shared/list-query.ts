import { z } from 'zod';
import { plainDigits, queryBoolean, timestampInput } from './formats.js';
import type { Pagination } from './envelope.js';
import { detail } from './validation.js';

/** Page size of every list and of the events feed: 1 to 100, default 50. */
export const pageSize = plainDigits(
  z
    .number({ error: 'must be an integer between 1 and 100' })
    .int('must be an integer between 1 and 100')
    .min(1, 'must be an integer between 1 and 100')
    .max(100, 'must be an integer between 1 and 100')
    .default(50),
).describe('Page size, 1 to 100.');

/** include_deleted, page and limit: the paging conventions of every list (users' list has only these). */
export const pageQueryShape = {
  include_deleted: queryBoolean.default(false).describe('Include soft-deleted records: true or false (1 and 0 work too); default false.'),
  page: plainDigits(
    z
      .number({ error: 'must be an integer >= 1' })
      // A page past the end is an empty page with the total, however far; only a number JavaScript cannot hold is refused.
      .max(Number.MAX_SAFE_INTEGER, { message: 'is too large', abort: true })
      .int('must be an integer >= 1')
      .min(1, 'must be an integer >= 1')
      .default(1),
  ).describe('Page number, from 1; a page past the end is empty.'),
  limit: pageSize,
};

export const LIST_SORTS = ['-created_at', 'created_at', '-updated_at', 'updated_at'] as const;
export type ListSort = (typeof LIST_SORTS)[number];

const ListSortSchema = z
  .enum(LIST_SORTS)
  .meta({ id: 'ListSort', description: 'A list order: by created_at or updated_at, - for newest first; ties by uuid in the same direction.' });

/** Incremental sync (DECISIONS §9.3): every list of a resource with updated_at takes these. */
export const syncQueryShape = {
  updated_since: timestampInput
    .optional()
    .describe('Only records whose updated_at is at or after this timestamp (ISO 8601 with Z or an offset).'),
  sort: ListSortSchema.default('-created_at')
    .describe('Order: -created_at (newest first, the default), created_at, -updated_at or updated_at; ties by uuid in the same direction.')
    .meta({ example: 'updated_at' }),
};

/** The list conventions of every resource list: paging plus incremental sync. */
export const listQueryShape = { ...pageQueryShape, ...syncQueryShape };

export const ListQuery = z.strictObject(listQueryShape);
export type ListQuery = z.infer<typeof ListQuery>;

/** Query of a single-record read: only include_deleted. */
export const GetQuery = z.strictObject({
  include_deleted: queryBoolean.default(false).describe('Return the record even when it is soft-deleted: true or false (1 and 0 work too); default false.'),
});
export type GetQuery = z.infer<typeof GetQuery>;

/** Query-string search term: a case-insensitive substring. */
export const searchQuery = z.string().trim().max(200, 'must be at most 200 characters').optional();

export interface Page<T> {
  items: T[];
  pagination: Pagination;
}

/** A page whose items are already one JSON array text, read so from the database (db/perf/api-rows.ts). */
export interface JsonPage {
  itemsJson: string;
  pagination: Pagination;
}

/** A page of items that are JSON text, as the JSON text of its items and its pagination. */
export function jsonPage(page: Page<string>): JsonPage {
  return { itemsJson: `[${page.items.join(',')}]`, pagination: page.pagination };
}

/** The page with each item mapped (a row to its API form). */
export function mapPage<T, U>(page: Page<T>, map: (item: T) => U): Page<U> {
  return { items: page.items.map((item) => map(item)), pagination: page.pagination };
}

export function pageOffset(query: Pick<ListQuery, 'page' | 'limit'>): number {
  return (query.page - 1) * query.limit;
}

export function toPage<T>(items: T[], total: number, query: Pick<ListQuery, 'page' | 'limit'>): Page<T> {
  return { items, pagination: paginationOf(total, query) };
}

export function paginationOf(total: number, query: Pick<ListQuery, 'page' | 'limit'>): Pagination {
  return { page: query.page, limit: query.limit, total, total_pages: total === 0 ? 0 : Math.ceil(total / query.limit) };
}

/**
 * A filter that takes one value or several, comma-separated (`status=New,Scheduled`), each one of `allowed`.
 * Parsed to the distinct values; documented as an array of the enum sent comma-separated (style form,
 * explode false), so clients and generators see the allowed values.
 */
export function commaSeparatedEnum<const T extends readonly [string, ...string[]]>(allowed: T, noun: string, example: T[number][]) {
  return z
    .string()
    .transform((value, context) => {
      const values = value.split(',').map((part) => part.trim());
      const unknown = values.filter((part) => !(allowed as readonly string[]).includes(part));
      if (unknown.length > 0) {
        context.addIssue({
          code: 'custom',
          message: `has unknown ${noun} ${unknown.map((part) => `'${part}'`).join(', ')}; allowed: ${allowed.join(', ')}`,
          params: detail('invalid_enum'),
        });
        return z.NEVER;
      }
      return [...new Set(values)] as Array<T[number]>;
    })
    .meta({ type: 'array', items: { type: 'string', enum: [...allowed] }, minItems: 1, maxItems: allowed.length, example });
}
