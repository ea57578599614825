import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { companies, jobPhotos, jobs, users } from '../../db/schema/index.js';
import { byUuid, listOrder, paginate, scoped, syncFilter } from '../../shared/tenant-table.js';
import { countWhere } from '../../db/perf/record-counts.js';
import { assertRecordedWrite } from '../../shared/recorded-writes.js';
import type { ListJobPhotosQuery } from './job-photos.schemas.js';

export type JobPhotoRow = typeof jobPhotos.$inferSelect;
export type JobPhotoInsert = typeof jobPhotos.$inferInsert;

export interface JobPhotoWithUser {
  photo: JobPhotoRow;
  user: { id: string; firstName: string; lastName: string } | null;
}

const selection = {
  photo: jobPhotos,
  userId: users.uuid,
  userFirstName: users.firstName,
  userLastName: users.lastName,
};

type SelectedRow = {
  photo: JobPhotoRow;
  userId: string | null;
  userFirstName: string | null;
  userLastName: string | null;
};

function withUser(row: SelectedRow): JobPhotoWithUser {
  const { photo, userId, userFirstName, userLastName } = row;
  return {
    photo,
    user: userId && userFirstName !== null && userLastName !== null ? { id: userId, firstName: userFirstName, lastName: userLastName } : null,
  };
}

function selectWithUser(db: Db, where: SQL) {
  return db
    .select(selection)
    .from(jobPhotos)
    .leftJoin(users, and(eq(users.companyId, jobPhotos.companyId), eq(users.uuid, jobPhotos.userId)))
    .where(where);
}

export async function findPhoto(db: Db, companyId: string, jobUuid: string, uuid: string, includeDeleted: boolean) {
  const rows = await selectWithUser(db, and(byUuid(jobPhotos, companyId, uuid, includeDeleted), eq(jobPhotos.jobUuid, jobUuid)) as SQL).limit(1);
  return rows[0] ? withUser(rows[0]) : null;
}

/** A photo of any job of the company, deleted too when includeDeleted (what its events carry). */
export async function findPhotoByUuid(db: Db, companyId: string, uuid: string, includeDeleted: boolean) {
  const rows = await selectWithUser(db, byUuid(jobPhotos, companyId, uuid, includeDeleted)).limit(1);
  return rows[0] ? withUser(rows[0]) : null;
}

export function listPhotos(db: Db, companyId: string, jobUuid: string, query: ListJobPhotosQuery) {
  const where = and(
    scoped(jobPhotos, companyId, query.include_deleted),
    eq(jobPhotos.jobUuid, jobUuid),
    query.photo_type ? eq(jobPhotos.photoType, query.photo_type) : undefined,
    syncFilter(jobPhotos, query),
  ) as SQL;
  return paginate(
    query,
    async (offset, limit) =>
      (await selectWithUser(db, where).orderBy(...listOrder(jobPhotos, query)).limit(limit).offset(offset)).map(withUser),
    () => countWhere(db, jobPhotos, where),
  );
}

/** The user a photo embeds, read as the photo reads join it (a deleted user too); null when there is none. */
export async function findUploader(db: Db, companyId: string, userId: string): Promise<JobPhotoWithUser['user']> {
  const [user] = await db
    .select({ id: users.uuid, firstName: users.firstName, lastName: users.lastName })
    .from(users)
    .where(and(eq(users.companyId, companyId), eq(users.uuid, userId)))
    .limit(1);
  return user ?? null;
}

export function insertPhotos(db: Db, values: JobPhotoInsert[]): Promise<JobPhotoRow[]> {
  assertRecordedWrite(db, jobPhotos);
  return db.insert(jobPhotos).values(values).returning();
}

/** Soft-deletes a live photo of the job; false when there is none. */
export async function softDeletePhoto(db: Db, companyId: string, jobUuid: string, uuid: string): Promise<boolean> {
  assertRecordedWrite(db, jobPhotos);
  const now = new Date();
  const deleted = await db
    .update(jobPhotos)
    .set({ deletedAt: now, updatedAt: now })
    .where(and(byUuid(jobPhotos, companyId, uuid), eq(jobPhotos.jobUuid, jobUuid)))
    .returning({ uuid: jobPhotos.uuid });
  return deleted.length > 0;
}

/**
 * Whether any of these photos of the job was committed, read once any transaction writing photos of the job
 * has ended: such a transaction locks the job's row, which this waits for.
 */
export function anyPhotoCommitted(db: Db, companyId: string, jobUuid: string, uuids: string[]): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.select({ uuid: jobs.uuid }).from(jobs).where(and(eq(jobs.companyId, companyId), eq(jobs.uuid, jobUuid))).for('share');
    const [found] = await tx
      .select({ uuid: jobPhotos.uuid })
      .from(jobPhotos)
      .where(and(eq(jobPhotos.companyId, companyId), inArray(jobPhotos.uuid, uuids)))
      .limit(1);
    return found !== undefined;
  });
}

/**
 * Which of these photo files are orphans, as `<company_id>/<uuid>`: their company is one of this database
 * and no photo row (deleted or not) names them. A file of a company this database does not know is never
 * one: a bucket shared with another deployment keeps that deployment's files.
 */
export async function orphanPhotoFiles(db: Db, photos: ReadonlyArray<{ companyId: string; uuid: string }>): Promise<Set<string>> {
  if (photos.length === 0) return new Set();
  const rows = (await db.execute(sql`select file.company_id, file.uuid
    from unnest(${sql.param(photos.map((photo) => photo.companyId))}::uuid[], ${sql.param(photos.map((photo) => photo.uuid))}::uuid[]) as file(company_id, uuid)
    where exists (select 1 from ${companies} company where company.uuid = file.company_id)
      and not exists (select 1 from ${jobPhotos} photo where photo.company_id = file.company_id and photo.uuid = file.uuid)`)) as unknown as {
    rows: Array<{ company_id: string; uuid: string }>;
  };
  return new Set(rows.rows.map((row) => `${row.company_id}/${row.uuid}`));
}
