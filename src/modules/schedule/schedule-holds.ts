import { newRecordId } from '../../shared/ids.js';
import type { Actor } from '../../auth/principal.js';
import type { Db } from '../../db/client.js';
import { scheduleConflict, type AppError, type ErrorDetail, type ScheduleConflict } from '../../errors.js';
import { softDelete, type TenantTable } from '../../shared/tenant-table.js';
import type { ObjectType } from '../../db/schema/index.js';
import { recordChanges } from '../changes/change-recorder.js';
import { deleteHolds, holdsParams, insertHolds, overlappingHolds, type HoldOwner, type NewHold } from './holds.repository.js';

/**
 * No double booking (DECISIONS §13): a live visit or time-off entry holds its users in schedule_holds,
 * whose exclusion constraint refuses a second hold of one user at one moment. The check is PostgreSQL's,
 * inside the writing transaction, so it holds across instances and concurrent clients: of two overlapping
 * bookings the second waits for the first and fails once it commits. The failed transaction changes
 * nothing; what it clashed with is looked up afterwards, for the 409.
 */

/** A user a write holds, and the request field that named them (`assigned_user_ids[1]`, `user_id`). */
export interface HeldUser {
  field: string;
  userId: string;
}

export interface HoldRequest {
  owner: HoldOwner;
  users: readonly HeldUser[];
  startsAt: Date;
  endsAt: Date;
  /** The owner is new in this transaction: it has no holds to drop. */
  fresh?: boolean;
}

/** What a write calls to set its holds; the guard remembers the last request for the 409. */
export interface HoldWriter {
  /** Replaces the owner's holds by one per user over [startsAt, endsAt). */
  hold(tx: Db, companyId: string, request: HoldRequest): Promise<void>;
  /** Drops the owner's holds (deleted, Completed, Cancelled, allowed to overlap). */
  release(tx: Db, companyId: string, owner: HoldOwner): Promise<void>;
  /**
   * For a new owner whose own statement writes its holds (insertHoldsSql): remembers them for the 409 and
   * answers that statement's parameters, or null when it holds no one.
   */
  claim(companyId: string, request: HoldRequest): Record<string, unknown> | null;
}

/** One hold per user of the request, each with a new id. */
function newHolds(companyId: string, request: HoldRequest): NewHold[] {
  const owner = 'visitUuid' in request.owner ? { visitUuid: request.owner.visitUuid } : { timeOffUuid: request.owner.timeOffUuid };
  return request.users.map((user) => ({ companyId, uuid: newRecordId(), userId: user.userId, startsAt: request.startsAt, endsAt: request.endsAt, ...owner }));
}

const EXCLUSION_VIOLATION = '23P01';
const DEADLOCK = '40P01';

/** The SQLSTATE of a (possibly wrapped) driver error. */
function sqlState(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether a failed write was refused for its holds: the exclusion constraint, or two bookings deadlocked on it. */
function isHoldRefusal(error: unknown): boolean {
  const state = sqlState(error);
  return state === EXCLUSION_VIOLATION || state === DEADLOCK;
}

/** The 409 of a refused hold request, with what it clashes with as committed now. */
async function conflictOf(db: Db, companyId: string, request: HoldRequest): Promise<{ error: AppError; found: boolean }> {
  const userIds = request.users.map((user) => user.userId);
  const rows = await overlappingHolds(db, companyId, userIds, request.startsAt, request.endsAt, request.owner);
  const conflicts: ScheduleConflict[] = rows.map((row) => ({
    user_id: row.userId,
    ...(row.visitUuid ? { visit_uuid: row.visitUuid } : { time_off_uuid: row.timeOffUuid as string }),
    starts_at: row.startsAt.toISOString(),
    ends_at: row.endsAt.toISOString(),
  }));
  const clashing = new Set(rows.map((row) => row.userId));
  const details: ErrorDetail[] = request.users
    .filter((user) => clashing.has(user.userId))
    .map((user) => ({ field: user.field, code: 'invalid', message: 'is already booked at this time' }));
  return { error: scheduleConflict(details, conflicts), found: rows.length > 0 };
}

/**
 * Runs a write that sets holds; a refused hold becomes 409 schedule_conflict naming the clashes. When the
 * clash is gone by the time it is looked up (the other booking was cancelled meanwhile), the write runs
 * once more.
 */
export async function guardHolds<T>(db: Db, companyId: string, write: (holds: HoldWriter) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    let last: HoldRequest | undefined;
    const writer: HoldWriter = {
      async hold(tx, company, request) {
        if (!request.fresh) await deleteHolds(tx, company, request.owner);
        if (request.users.length === 0) return;
        last = request;
        await insertHolds(tx, newHolds(company, request));
      },
      async release(tx, company, owner) {
        await deleteHolds(tx, company, owner);
      },
      claim(company, request) {
        if (request.users.length === 0) return null;
        last = request;
        return holdsParams(newHolds(company, request));
      },
    };
    try {
      return await write(writer);
    } catch (error) {
      if (!last || !isHoldRefusal(error)) throw error;
      const conflict = await conflictOf(db, companyId, last);
      if (conflict.found || attempt >= 1) throw conflict.error;
    }
  }
}

/** Soft-deletes a visit or a time-off entry with its event; a deleted owner frees its time at once. */
export async function removeHolder(db: Db, actor: Actor, held: { objectType: ObjectType; table: TenantTable; uuid: string; owner: HoldOwner }): Promise<void> {
  await recordChanges(db, actor, async (changes) => {
    await changes.target(held.objectType, held.uuid);
    await softDelete(changes.tx, held.table, actor.companyId, held.uuid);
    await deleteHolds(changes.tx, actor.companyId, held.owner);
  });
}
