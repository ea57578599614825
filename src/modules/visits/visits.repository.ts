import { and, asc, desc, eq, gt, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { jobs, locations, users, visits, type JobStatus } from '../../db/schema/index.js';
import { countRows, insertRow, listOrder, paginate, scoped, syncFilter, updateRow } from '../../shared/tenant-table.js';
import { prepared } from '../../db/perf/prepared.js';
import { MAX_VISIT_MS } from './visit-times.js';
import type { ListVisitsQuery } from './visits.schemas.js';

export type VisitRow = typeof visits.$inferSelect;
export type VisitInsert = typeof visits.$inferInsert;

export interface VisitUser {
  id: string;
  first_name: string;
  last_name: string;
}

/** A visit with what its answer embeds: its job's title, status, customer and location, and its users. */
export interface VisitWithRelations {
  visit: VisitRow;
  job: { uuid: string; title: string; status: JobStatus; customerUuid: string; locationUuid: string | null };
  users: VisitUser[];
}

/** The assigned users in the order of assigned_user_ids, as JSON, in the same statement. */
const assignedUsers = sql<VisitUser[]>`(
  select coalesce(json_agg(json_build_object('id', u.id, 'first_name', u.first_name, 'last_name', u.last_name) order by a.position), '[]'::json)
  from unnest(${visits.assignedUserIds}) with ordinality as a(user_id, position)
  join ${users} u on u.company_id = ${visits.companyId} and u.id = a.user_id
)`;

const visitColumns = {
  visit: visits,
  jobTitle: jobs.title,
  jobStatus: jobs.status,
  jobCustomerUuid: jobs.customerUuid,
  jobLocationUuid: jobs.locationUuid,
  users: assignedUsers,
};

type SelectedVisit = {
  visit: VisitRow;
  jobTitle: string;
  jobStatus: JobStatus;
  jobCustomerUuid: string;
  jobLocationUuid: string | null;
  users: VisitUser[] | string;
};

function withRelations(row: SelectedVisit): VisitWithRelations {
  return {
    visit: row.visit,
    job: { uuid: row.visit.jobUuid, title: row.jobTitle, status: row.jobStatus, customerUuid: row.jobCustomerUuid, locationUuid: row.jobLocationUuid },
    // PGlite and node-postgres both parse json; a string would be a driver that does not.
    users: typeof row.users === 'string' ? (JSON.parse(row.users) as VisitUser[]) : row.users,
  };
}

const jobOfVisit = and(eq(jobs.companyId, visits.companyId), eq(jobs.uuid, visits.jobUuid));

/** One visit with its relations, in one statement; `lock` holds the visit row FOR UPDATE. */
export async function findVisit(db: Db, companyId: string, uuid: string, options: { includeDeleted: boolean; lock?: boolean }): Promise<VisitWithRelations | null> {
  const name = `find_visit_${options.includeDeleted ? 'any' : 'live'}${options.lock ? '_for_update' : ''}`;
  const statement = prepared(db, name, () => {
    const query = db
      .select(visitColumns)
      .from(visits)
      .innerJoin(jobs, jobOfVisit)
      .where(
        and(
          eq(visits.companyId, sql.placeholder('companyId')),
          eq(visits.uuid, sql.placeholder('uuid')),
          options.includeDeleted ? undefined : isNull(visits.deletedAt),
        ),
      )
      .limit(1);
    return options.lock ? query.for('update', { of: visits }) : query;
  });
  const rows = (await statement.execute({ companyId, uuid })) as SelectedVisit[];
  return rows[0] ? withRelations(rows[0]) : null;
}

function listFilters(companyId: string, query: ListVisitsQuery): Array<SQL | undefined> {
  const jobsWhere = (column: typeof jobs.customerUuid | typeof jobs.locationUuid, value: string) =>
    inArray(
      visits.jobUuid,
      sql`(select ${jobs.uuid} from ${jobs} where ${jobs.companyId} = ${companyId} and ${column} = ${value})`,
    );
  return [
    query.job_uuid ? eq(visits.jobUuid, query.job_uuid) : undefined,
    query.customer_uuid ? jobsWhere(jobs.customerUuid, query.customer_uuid) : undefined,
    query.location_uuid ? jobsWhere(jobs.locationUuid, query.location_uuid) : undefined,
    query.assigned_user_id ? sql`${visits.assignedUserIds} @> array[${query.assigned_user_id}]::uuid[]` : undefined,
    query.unassigned === undefined
      ? undefined
      : query.unassigned
        ? sql`cardinality(${visits.assignedUserIds}) = 0`
        : sql`cardinality(${visits.assignedUserIds}) > 0`,
    query.status ? inArray(visits.status, query.status) : undefined,
    // [starts_at, ends_at) overlaps [from, to). A visit lasts at most 24 hours, so one that ends after `from`
    // starts after from - 24 h: that bound lets the starts_at index find the window.
    query.from ? gt(visits.endsAt, query.from) : undefined,
    query.from ? gt(visits.startsAt, new Date(query.from.getTime() - MAX_VISIT_MS)) : undefined,
    query.to ? lt(visits.startsAt, query.to) : undefined,
    syncFilter(visits, { updated_since: query.updated_since }),
  ];
}

function orderOf(query: ListVisitsQuery) {
  if (query.sort === 'starts_at') return [asc(visits.startsAt), asc(visits.uuid)];
  if (query.sort === '-starts_at') return [desc(visits.startsAt), desc(visits.uuid)];
  return [...listOrder(visits, { sort: query.sort })];
}

/**
 * A technician's window in start order, the schedule's hot read (`assigned_user_id`, `from`, `to`,
 * sort=starts_at and nothing else): one prepared statement.
 */
function isTechnicianWindow(query: ListVisitsQuery): query is ListVisitsQuery & { assigned_user_id: string; from: Date; to: Date } {
  return (
    query.assigned_user_id !== undefined &&
    query.from !== undefined &&
    query.to !== undefined &&
    query.sort === 'starts_at' &&
    !query.include_deleted &&
    !query.updated_since &&
    !query.job_uuid &&
    !query.customer_uuid &&
    !query.location_uuid &&
    query.unassigned === undefined &&
    !query.status
  );
}

function technicianWindow(db: Db, companyId: string, query: ListVisitsQuery & { assigned_user_id: string; from: Date; to: Date }, offset: number, limit: number) {
  const statement = prepared(db, 'list_visits_technician_window', () =>
    db
      .select(visitColumns)
      .from(visits)
      .innerJoin(jobs, jobOfVisit)
      .where(
        and(
          eq(visits.companyId, sql.placeholder('companyId')),
          isNull(visits.deletedAt),
          sql`${visits.assignedUserIds} @> array[${sql.placeholder('userId')}::uuid]`,
          sql`${visits.endsAt} > ${sql.placeholder('from')}::timestamptz`,
          sql`${visits.startsAt} > ${sql.placeholder('earliest')}::timestamptz`,
          sql`${visits.startsAt} < ${sql.placeholder('to')}::timestamptz`,
        ),
      )
      .orderBy(asc(visits.startsAt), asc(visits.uuid))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset')),
  );
  return statement.execute({
    companyId,
    userId: query.assigned_user_id,
    from: query.from.toISOString(),
    earliest: new Date(query.from.getTime() - MAX_VISIT_MS).toISOString(),
    to: query.to.toISOString(),
    limit,
    offset,
  }) as Promise<SelectedVisit[]>;
}

export function listVisits(db: Db, companyId: string, query: ListVisitsQuery) {
  const filters = listFilters(companyId, query);
  if (isTechnicianWindow(query)) {
    return paginate<VisitWithRelations>(
      query,
      async (offset, limit) => (await technicianWindow(db, companyId, query, offset, limit)).map(withRelations),
      () => countRows(db, visits, companyId, false, filters),
    );
  }
  const where = and(scoped(visits, companyId, query.include_deleted), ...filters);
  return paginate<VisitWithRelations>(
    query,
    async (offset, limit) => {
      const rows = (await db
        .select(visitColumns)
        .from(visits)
        .innerJoin(jobs, jobOfVisit)
        .where(where)
        .orderBy(...orderOf(query))
        .limit(limit)
        .offset(offset)) as SelectedVisit[];
      return rows.map(withRelations);
    },
    () => countRows(db, visits, companyId, query.include_deleted, filters),
  );
}

export function insertVisit(db: Db, values: VisitInsert): Promise<VisitRow> {
  return insertRow(db, visits, values);
}

/** Updates a live visit, its SEQUENCE growing by one (the calendar feed's). */
export function updateVisit(db: Db, companyId: string, uuid: string, values: Partial<VisitInsert>, options: { includeDeleted?: boolean } = {}) {
  return updateRow(db, visits, companyId, uuid, { ...values, sequence: sql`${visits.sequence} + 1` as never }, options);
}

/** The job a visit is created for: locked, its status, and the time zone of its location or else the primary location. */
export async function jobTimeZone(db: Db, companyId: string, locationUuid: string | null): Promise<string | null> {
  const statement = prepared(db, 'visit_default_time_zone', () =>
    db
      .select({ timezone: locations.timezone })
      .from(locations)
      .where(
        and(
          eq(locations.companyId, sql.placeholder('companyId')),
          isNull(locations.deletedAt),
          sql`(${locations.uuid} = ${sql.placeholder('locationUuid')}::uuid or ${locations.isPrimary})`,
        ),
      )
      .orderBy(sql`${locations.uuid} = ${sql.placeholder('locationUuid')}::uuid desc`)
      .limit(1),
  );
  const rows = (await statement.execute({ companyId, locationUuid })) as Array<{ timezone: string }>;
  return rows[0]?.timezone ?? null;
}

/** The live users of the company among `ids`: id and names. */
export async function liveUsers(db: Db, companyId: string, ids: readonly string[]): Promise<VisitUser[]> {
  if (ids.length === 0) return [];
  const statement = prepared(db, 'visit_live_users', () =>
    db
      .select({ id: users.uuid, first_name: users.firstName, last_name: users.lastName })
      .from(users)
      .where(and(eq(users.companyId, sql.placeholder('companyId')), sql`${users.uuid} = any(${sql.placeholder('ids')}::uuid[])`, isNull(users.deletedAt))),
  );
  return (await statement.execute({ companyId, ids: [...ids] })) as VisitUser[];
}

/** The visits of a job that are live and not Completed or Cancelled: what deleting the job cancels. */
export async function openVisitsOfJob(db: Db, companyId: string, jobUuid: string): Promise<string[]> {
  const rows = await db
    .select({ uuid: visits.uuid })
    .from(visits)
    .where(and(scoped(visits, companyId), eq(visits.jobUuid, jobUuid), sql`${visits.status} not in ('Completed', 'Cancelled')`))
    .orderBy(asc(visits.startsAt), asc(visits.uuid));
  return rows.map((row) => row.uuid);
}

/**
 * Raises the calendar SEQUENCE of the job's live visits: what their feed events show of the job (its title,
 * its service address) changed. Their API form has no sequence, so nothing else changes.
 */
export async function resequenceVisitsOfJob(db: Db, companyId: string, jobUuid: string): Promise<void> {
  await db
    .update(visits)
    .set({ sequence: sql`${visits.sequence} + 1` })
    .where(and(scoped(visits, companyId), eq(visits.jobUuid, jobUuid)));
}
