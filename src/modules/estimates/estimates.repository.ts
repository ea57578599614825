import { and, eq } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client.js';
import { customers, estimates, jobs, locations, templates } from '../../db/schema/index.js';
import { byUuid, countRows, insertRow, listOrder, paginate, scoped, searchMatches, syncFilter, updateRow } from '../../shared/tenant-table.js';
import { bucketCondition } from '../../db/perf/record-counts.js';
import type { ListEstimatesQuery } from './estimates.schemas.js';

export type EstimateRow = typeof estimates.$inferSelect;
export type EstimateInsert = typeof estimates.$inferInsert;

/** Embedded objects join on the same company; a related record deleted later still shows. */
const sameCompany = (table: typeof customers | typeof jobs | typeof templates | typeof locations, uuidColumn: PgColumn) =>
  and(eq(table.companyId, estimates.companyId), eq(table.uuid, uuidColumn));

const customerColumns = { uuid: customers.uuid, firstName: customers.firstName, lastName: customers.lastName };

export type EstimateWithCustomer = {
  estimate: EstimateRow;
  customer: { uuid: string; firstName: string; lastName: string };
};

export type EstimateDetail = EstimateWithCustomer & {
  job: { uuid: string; title: string; status: string } | null;
  template: { uuid: string; name: string; pricingType: string };
  location: { uuid: string; name: string } | null;
};

export function findEstimateDetail(db: Db, companyId: string, uuid: string, includeDeleted = false): Promise<EstimateDetail | null> {
  return db
    .select({
      estimate: estimates,
      customer: customerColumns,
      job: { uuid: jobs.uuid, title: jobs.title, status: jobs.status },
      template: { uuid: templates.uuid, name: templates.name, pricingType: templates.pricingType },
      location: { uuid: locations.uuid, name: locations.name },
    })
    .from(estimates)
    .innerJoin(customers, sameCompany(customers, estimates.customerUuid))
    .innerJoin(templates, sameCompany(templates, estimates.templateUuid))
    .leftJoin(jobs, sameCompany(jobs, estimates.jobUuid))
    .leftJoin(locations, sameCompany(locations, estimates.locationUuid))
    .where(byUuid(estimates, companyId, uuid, includeDeleted))
    .limit(1)
    .then((rows) => rows[0] ?? null);
}

export function listEstimates(db: Db, companyId: string, query: ListEstimatesQuery) {
  const filters = [
    query.customer_uuid ? eq(estimates.customerUuid, query.customer_uuid) : undefined,
    query.job_uuid ? eq(estimates.jobUuid, query.job_uuid) : undefined,
    searchMatches(estimates.searchText, query.search),
    syncFilter(estimates, query),
  ];
  const bucket = query.status ? { column: estimates.status, values: [query.status] } : undefined;
  const where = and(scoped(estimates, companyId, query.include_deleted), ...filters, bucketCondition(bucket));
  return paginate<EstimateWithCustomer>(
    query,
    (offset, limit) =>
      db
        .select({ estimate: estimates, customer: customerColumns })
        .from(estimates)
        .innerJoin(customers, sameCompany(customers, estimates.customerUuid))
        .where(where)
        .orderBy(...listOrder(estimates, query))
        .limit(limit)
        .offset(offset),
    () => countRows(db, estimates, companyId, query.include_deleted, filters, bucket),
  );
}

export function insertEstimate(db: Db, values: EstimateInsert): Promise<EstimateRow> {
  return insertRow(db, estimates, values);
}

export function updateEstimate(db: Db, companyId: string, uuid: string, values: Partial<EstimateInsert>) {
  return updateRow(db, estimates, companyId, uuid, values);
}
