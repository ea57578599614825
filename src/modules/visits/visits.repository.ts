import { and, asc, desc, eq, getTableColumns, gt, inArray, isNull, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { jobs, locations, users, visits, type JobStatus } from '../../db/schema/index.js';
import { countRows, insertRow, listOrder, pageTotal, paginate, scoped, syncFilter, updateRow } from '../../shared/tenant-table.js';
import { pageOffset, paginationOf, type JsonPage } from '../../shared/list-query.js';
import { prepared, queryRows } from '../../db/perf/prepared.js';
import { MAX_VISIT_MS } from '../schedule/holds.repository.js';
import type { ListVisitsQuery } from './visits.schemas.js';
import type { CreateGuard } from '../changes/changes.repository.js';
import { insertHoldsSql } from '../schedule/holds.repository.js';

/** A visit's columns but record_json (its GET form as text, written by triggers and sent only by the window). */
const { recordJson: _recordJson, ...visitFields } = getTableColumns(visits);
export type VisitRow = Omit<typeof visits.$inferSelect, 'recordJson'>;
export type VisitInsert = Omit<typeof visits.$inferInsert, 'recordJson'>;

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
  visit: visitFields,
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
 * sort=starts_at and nothing else): read through visit_assignees, in API form.
 */
export function isTechnicianWindow(query: ListVisitsQuery): query is TechnicianWindowQuery {
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

export type TechnicianWindowQuery = ListVisitsQuery & { assigned_user_id: string; from: Date; to: Date };

/** The technician's assignments in the window: [starts_at, ends_at) overlaps [from, to) (a visit lasts at most 24 h). */
const WINDOW = sql`a.company_id = ${sql.placeholder('companyId')}::uuid and a.user_id = ${sql.placeholder('userId')}::uuid
  and a.starts_at > ${sql.placeholder('earliest')}::timestamptz and a.starts_at < ${sql.placeholder('to')}::timestamptz
  and a.ends_at > ${sql.placeholder('from')}::timestamptz`;

function windowParams(companyId: string, query: TechnicianWindowQuery) {
  return {
    companyId,
    userId: query.assigned_user_id,
    from: query.from.toISOString(),
    earliest: new Date(query.from.getTime() - MAX_VISIT_MS).toISOString(),
    to: query.to.toISOString(),
  };
}

/**
 * A page of a technician's window, each visit as the JSON text its assignment rows keep (record_json, its GET
 * form): one prepared statement on the range of visit_assignees_window_idx (index order is the page order),
 * no lookup in visits (the table holds live visits only); the total, when the page cannot tell it, counts the
 * same index range.
 */
export async function technicianWindowPage(db: Db, companyId: string, query: TechnicianWindowQuery): Promise<JsonPage> {
  const params = windowParams(companyId, query);
  // The page as one JSON array text and its length: one field to read, not a row per visit to read and join.
  const [page] = await queryRows<{ items_json: string; found: number }>(
    db,
    'visits_technician_window_page',
    // A row written before migration 0019 keeps null until its visit's next write: its text is made here.
    () => sql`select '[' || coalesce(string_agg(page.visit_json, ',' order by page.starts_at, page.visit_uuid), '') || ']' as items_json,
        count(*)::int as found
      from (select coalesce(a.record_json, (select visit_record_json(visit) from ${visits} visit
            where visit.company_id = a.company_id and visit.uuid = a.visit_uuid)) as visit_json, a.starts_at, a.visit_uuid
          from visit_assignees a
          where ${WINDOW}
          order by a.starts_at, a.visit_uuid
          limit ${sql.placeholder('limit')} offset ${sql.placeholder('offset')}) page`,
    { ...params, limit: query.limit, offset: pageOffset(query) },
  );
  const total = await pageTotal(query, page.found, async () => {
    const [row] = await queryRows<{ total: number }>(
      db,
      'visits_technician_window_count',
      () => sql`select count(*)::int as total from visit_assignees a where ${WINDOW}`,
      params,
    );
    return row.total;
  });
  return { itemsJson: page.items_json, pagination: paginationOf(total, query) };
}

export function listVisits(db: Db, companyId: string, query: ListVisitsQuery) {
  const filters = listFilters(companyId, query);
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

/**
 * The default time zone of a job's visits: its location's, else the company's primary location's (live
 * locations only), as a scalar subquery over the given company and location expressions.
 */
function defaultZoneOf(companyId: SQL, locationUuid: SQL): SQL {
  return sql`(select l.timezone from ${locations} l
    where l.company_id = ${companyId} and l.deleted_at is null and (l.uuid = ${locationUuid} or l.is_primary)
    order by l.uuid = ${locationUuid} desc limit 1)`;
}

/** The default time zone of a visit of a job at this location (defaultZoneOf), or null. */
export async function jobTimeZone(db: Db, companyId: string, locationUuid: string | null): Promise<string | null> {
  const rows = await queryRows<{ timezone: string | null }>(
    db,
    'visit_default_time_zone',
    () => sql`select ${defaultZoneOf(sql`${sql.placeholder('companyId')}::uuid`, sql`${sql.placeholder('locationUuid')}::uuid`)} as timezone`,
    { companyId, locationUuid },
  );
  return rows[0]?.timezone ?? null;
}

/** A user as a booking reads it: the embed's fields and the row's version (xmin). */
export type VersionedUser = VisitUser & { version: string };

/** What a visit's booking reads: its job (with its version), the job's default time zone, the users. */
export interface BookingInputs {
  job: VisitWithRelations['job'] & { version: string };
  timeZone: string | null;
  /** The live users of the company among those asked. */
  users: VersionedUser[];
}

/** The job (live, else null), its default time zone and the live users among `userIds`: one prepared statement. */
export async function bookingInputs(db: Db, companyId: string, jobUuid: string, userIds: readonly string[]): Promise<BookingInputs | null> {
  const [row] = await queryRows<{
    uuid: string;
    title: string;
    status: JobStatus;
    customer_uuid: string;
    location_uuid: string | null;
    version: string;
    time_zone: string | null;
    users: VersionedUser[] | string;
  }>(
    db,
    'visit_booking_inputs',
    () => sql`select job.uuid, job.title, job.status, job.customer_uuid, job.location_uuid, job.xmin::text as version,
        ${defaultZoneOf(sql`job.company_id`, sql`job.location_uuid`)} as time_zone,
        (select coalesce(json_agg(json_build_object('id', u.id, 'first_name', u.first_name, 'last_name', u.last_name, 'version', u.xmin::text)), '[]'::json)
          from ${users} u where u.company_id = job.company_id and u.id = any(${sql.placeholder('userIds')}::uuid[]) and u.deleted_at is null) as users
      from ${jobs} job
      where job.company_id = ${sql.placeholder('companyId')}::uuid and job.uuid = ${sql.placeholder('jobUuid')}::uuid and job.deleted_at is null`,
    { companyId, jobUuid, userIds: [...userIds] },
  );
  if (!row) return null;
  return {
    job: { uuid: row.uuid, title: row.title, status: row.status, customerUuid: row.customer_uuid, locationUuid: row.location_uuid, version: row.version },
    timeZone: row.time_zone,
    // PGlite and node-postgres both parse json; a string would be a driver that does not.
    users: typeof row.users === 'string' ? (JSON.parse(row.users) as VersionedUser[]) : row.users,
  };
}

/**
 * The checks and writes a booking's statement (createCheckedRecord) adds around the visit's row, so that
 * what the booking read (perhaps kept from an earlier booking) is what it writes with: the job locked FOR
 * SHARE (a job delete, which cancels its visits, waits for the booking or the booking for it) and still the
 * version read; each user live and still the version read; when the visit takes the job's default time
 * zone, still that zone. Then the holds (insertHoldsSql's parameters in `holds`) are written with the
 * visit, under the exclusion constraint.
 */
export function bookingGuard(
  companyId: string,
  inputs: BookingInputs,
  usedDefaultZone: boolean,
  assigned: readonly VersionedUser[],
  holds: Record<string, unknown> | null,
): CreateGuard {
  const company = sql`${sql.placeholder('bookCompany')}::uuid`;
  return {
    name: holds ? 'booking_held' : 'booking',
    before: sql`job as (
        select job.company_id, job.location_uuid from ${jobs} job where job.company_id = ${company} and job.uuid = ${sql.placeholder('bookJob')}::uuid
          and job.deleted_at is null and job.xmin = ${sql.placeholder('bookJobVersion')}::xid
        for share
      ), ready as (
        select 1 from job
        where (select count(*) from unnest(${sql.placeholder('bookUsers')}::uuid[], ${sql.placeholder('bookUserVersions')}::xid[]) as asked(id, version)
            join ${users} u on u.company_id = ${company} and u.id = asked.id and u.xmin = asked.version and u.deleted_at is null
          ) = cardinality(${sql.placeholder('bookUsers')}::uuid[])
          and (not ${sql.placeholder('bookDefaultZone')}::boolean
            or ${defaultZoneOf(sql`job.company_id`, sql`job.location_uuid`)} is not distinct from ${sql.placeholder('bookZone')}::text)
      )`,
    source: sql`from ready`,
    after: holds ? sql`holds as (${insertHoldsSql(sql`where exists (select 1 from inserted)`)})` : undefined,
    params: {
      bookCompany: companyId,
      bookJob: inputs.job.uuid,
      bookJobVersion: inputs.job.version,
      bookUsers: assigned.map((user) => user.id),
      bookUserVersions: assigned.map((user) => user.version),
      bookDefaultZone: usedDefaultZone,
      bookZone: inputs.timeZone,
      ...holds,
    },
  };
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

/** The live visits of a job, whatever their status, in a stable order (the order their rows are locked in). */
export async function liveVisitsOfJob(db: Db, companyId: string, jobUuid: string): Promise<string[]> {
  const rows = await db
    .select({ uuid: visits.uuid })
    .from(visits)
    .where(and(scoped(visits, companyId), eq(visits.jobUuid, jobUuid)))
    .orderBy(asc(visits.startsAt), asc(visits.uuid));
  return rows.map((row) => row.uuid);
}

/** Marks the visits as changed in one statement: a new updated_at and the next calendar SEQUENCE. */
export async function stampVisits(db: Db, companyId: string, uuids: readonly string[]): Promise<void> {
  if (uuids.length === 0) return;
  await db
    .update(visits)
    .set({ updatedAt: new Date(), sequence: sql`${visits.sequence} + 1` })
    .where(and(scoped(visits, companyId), inArray(visits.uuid, [...uuids])));
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
