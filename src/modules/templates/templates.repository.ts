import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { templates } from '../../db/schema/index.js';
import { countRows, findRow, paginate, selectPage, syncFilter } from '../../shared/tenant-table.js';
import type { ListTemplatesQuery } from './templates.schemas.js';

export type TemplateRow = typeof templates.$inferSelect;
export type TemplateInsert = typeof templates.$inferInsert;

export function findTemplate(db: Db, companyId: string, uuid: string, includeDeleted = false) {
  return findRow(db, templates, companyId, uuid, { includeDeleted });
}

export function listTemplates(db: Db, companyId: string, query: ListTemplatesQuery) {
  const filters = [
    query.pricing_type ? eq(templates.pricingType, query.pricing_type) : undefined,
    query.is_active === undefined ? undefined : eq(templates.isActive, query.is_active),
    syncFilter(templates, query),
  ];
  return paginate(
    query,
    (offset, limit) => selectPage(db, templates, companyId, { includeDeleted: query.include_deleted, filters, sort: query.sort, offset, limit }),
    () => countRows(db, templates, companyId, query.include_deleted, filters),
  );
}

