import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { visits, type VisitStatus } from '../../db/schema/index.js';
import type { Actor } from '../../auth/principal.js';
import { invalidField, missingReference, validationError, type ErrorDetail } from '../../errors.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { mapPage } from '../../shared/list-query.js';
import { createCheckedRecord, getRecord, recordChanges, type Changes, type RecordedType } from '../changes/change-recorder.js';
import { newRow } from '../../shared/record-rows.js';
import { toJobResponse } from '../jobs/jobs.mapper.js';
import { lockJobWithRelations, updateJob } from '../jobs/jobs.repository.js';
import { guardHolds, removeHolder, type HoldWriter } from '../schedule/schedule-holds.js';
import { FINAL_STATUSES, statusStamp, visitStatusChange } from './visit-status.js';
import { requestedInterval, type Interval } from './visit-times.js';
import { keptBookingInputs, readBookingInputs } from './booking-inputs.js';
import { toVisitResponse } from './visits.mapper.js';
import * as repository from './visits.repository.js';
import type { CreateVisitBody, ListVisitsQuery, UpdateVisitBody, VisitResponse } from './visits.schemas.js';

/** The time zone of a visit when neither the body nor the job's locations give one (DECISIONS §13). */
export const DEFAULT_TIME_ZONE = 'America/New_York';

/** Job statuses a new open visit moves to Scheduled. */
const UNSCHEDULED_JOB_STATUSES = new Set(['New', 'Contacted']);

/** The assigned users are distinct (400 naming the repeated `assigned_user_ids[i]`). */
function checkDistinct(ids: readonly string[]): void {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (seen.has(id)) details.push({ field: `assigned_user_ids[${index}]`, code: 'invalid', message: 'repeats a user already in the list' });
    seen.add(id);
  });
  if (details.length > 0) throw validationError(details, 'body');
}

/** Each assigned user is among the live users `found` (400 naming each `assigned_user_ids[i]` that is not). */
function checkLive(ids: readonly string[], found: readonly repository.VisitUser[]): void {
  const live = new Set(found.map((user) => user.id));
  const details: ErrorDetail[] = [];
  ids.forEach((id, index) => {
    if (!live.has(id)) details.push({ field: `assigned_user_ids[${index}]`, code: 'invalid_reference', message: 'does not refer to an existing user of this company' });
  });
  if (details.length > 0) throw validationError(details, 'body');
}

/**
 * The assigned users: distinct, and each a live user of the company (400 naming `assigned_user_ids[i]`).
 * Answers their names for the embed.
 */
async function requireUsers(db: Db, companyId: string, ids: readonly string[]): Promise<repository.VisitUser[]> {
  checkDistinct(ids);
  const found = await repository.liveUsers(db, companyId, ids);
  checkLive(ids, found);
  return found;
}

/** Whether a visit in this state holds its users (DECISIONS §13). */
function holdsUsers(state: { status: VisitStatus; allowOverlap: boolean; deletedAt?: Date | null; assignedUserIds: readonly string[] }): boolean {
  return !state.deletedAt && !state.allowOverlap && !FINAL_STATUSES.has(state.status) && state.assignedUserIds.length > 0;
}

function heldUsers(userIds: readonly string[]) {
  return userIds.map((userId, index) => ({ field: `assigned_user_ids[${index}]`, userId }));
}

/** Whether creating a visit in `status` moves a job in `jobStatus` to Scheduled (an open visit of a New or Contacted job). */
function schedulesJob(status: VisitStatus, jobStatus: string): boolean {
  return !FINAL_STATUSES.has(status) && UNSCHEDULED_JOB_STATUSES.has(jobStatus);
}

/** A new visit's columns from the create body, its zone and its interval. */
function newVisitValues(companyId: string, uuid: string, body: CreateVisitBody, timeZone: string, interval: Interval, now: Date): repository.VisitInsert {
  const status = body.status ?? 'Scheduled';
  return {
    companyId,
    uuid,
    jobUuid: body.job_uuid,
    title: body.title ?? null,
    instructions: body.instructions ?? null,
    timeZone,
    startsAt: interval.startsAt,
    endsAt: interval.endsAt,
    arrivalWindowMinutes: body.arrival_window_minutes ?? null,
    assignedUserIds: body.assigned_user_ids ?? [],
    allowOverlap: body.allow_overlap ?? false,
    status,
    sequence: 0,
    ...statusStamp(status, null, now),
  };
}

/** How many times a booking is tried unlocked when its job, users or zone changed between its read and its write; then it locks the job. */
const BOOKING_ATTEMPTS = 5;

/**
 * A visit create. The usual one, which leaves its job as it is, is one statement (createCheckedRecord: the
 * visit, its holds under the exclusion constraint, its event and a keyed request's key) after what it needs
 * to know (the job, its default zone, the users), which an earlier booking may have kept (booking-inputs.ts):
 * the statement writes only if they are still as read, else the booking reads them afresh and starts over.
 * A visit that moves its job to Scheduled is written in a transaction with the job's change (createLockingJob).
 */
async function create(db: Db, actor: Actor, body: CreateVisitBody): Promise<VisitResponse> {
  const uuid = newRecordId();
  const companyId = actor.companyId;
  const userIds = body.assigned_user_ids ?? [];
  checkDistinct(userIds);
  return guardHolds(db, companyId, async (holds) => {
    for (let attempt = 1; ; attempt++) {
      const kept = attempt === 1 ? keptBookingInputs(companyId, body.job_uuid, userIds) : undefined;
      const inputs = kept ?? (await readBookingInputs(db, companyId, body.job_uuid, userIds));
      if (!inputs) throw missingReference('job_uuid');
      if (schedulesJob(body.status ?? 'Scheduled', inputs.job.status)) {
        // A kept status may be older than the job's move to Scheduled: only a fresh one sends the booking there.
        if (kept) continue;
        return createLockingJob(db, actor, body, uuid, holds);
      }
      const timeZone = body.time_zone ?? inputs.timeZone ?? DEFAULT_TIME_ZONE;
      const interval = requestedInterval(body, timeZone, { required: true })!;
      checkLive(userIds, inputs.users);
      const now = new Date();
      const row = newRow<repository.VisitRow>(visits, newVisitValues(companyId, uuid, body, timeZone, interval, now), now);
      const record = toVisitResponse({ visit: row, job: inputs.job, users: inputs.users });
      const held = holdsUsers(row) ? holds.claim(companyId, { owner: { visitUuid: uuid }, users: heldUsers(userIds), ...interval, fresh: true }) : null;
      const guard = repository.bookingGuard(companyId, inputs, body.time_zone === undefined, inputs.users, held);
      // The row keeps its GET form (record_json), which is this answer: the database need not make it again.
      if (await createCheckedRecord(db, actor, 'visit', { ...row, recordJson: JSON.stringify(record) }, record, guard)) return record;
      if (attempt >= BOOKING_ATTEMPTS) return createLockingJob(db, actor, body, uuid, holds);
    }
  });
}

/**
 * A visit written in one transaction with its job locked (the visit, its holds, its event, and the job's
 * move to Scheduled with its event when the visit moves it): a visit that moves its job, or a booking whose
 * job kept changing under its one-statement attempts.
 */
function createLockingJob(db: Db, actor: Actor, body: CreateVisitBody, uuid: string, holds: HoldWriter): Promise<VisitResponse> {
  const companyId = actor.companyId;
  return recordChanges(db, actor, async (changes) => {
    const { tx } = changes;
    const locked = await lockJobWithRelations(tx, companyId, body.job_uuid);
    if (!locked) throw missingReference('job_uuid');
    const timeZone = body.time_zone ?? (await repository.jobTimeZone(tx, companyId, locked.job.locationUuid)) ?? DEFAULT_TIME_ZONE;
    const interval = requestedInterval(body, timeZone, { required: true })!;
    const userIds = body.assigned_user_ids ?? [];
    const users = await requireUsers(tx, companyId, userIds);
    const now = new Date();
    const values = { ...newVisitValues(companyId, uuid, body, timeZone, interval, now), createdAt: now, updatedAt: now };
    const row = await repository.insertVisit(tx, values);
    if (holdsUsers(row)) {
      await holds.hold(tx, companyId, { owner: { visitUuid: uuid }, users: heldUsers(userIds), ...interval, fresh: true });
    }
    // An open visit schedules a job that is New or Contacted (a job.updated event); the job may have moved since it was read.
    let job = locked.job;
    if (schedulesJob(row.status, job.status)) {
      changes.touched('job', job.uuid, toJobResponse(locked));
      job = (await updateJob(tx, companyId, job.uuid, { status: 'Scheduled' }))!;
      changes.after('job', job.uuid, toJobResponse({ ...locked, job }));
    }
    const record = toVisitResponse({
      visit: row,
      job: { uuid: job.uuid, title: job.title, status: job.status, customerUuid: job.customerUuid, locationUuid: job.locationUuid },
      users,
    });
    changes.created('visit', uuid, record);
    return changes.answer('visit', uuid);
  });
}

/** Sets the holds of a visit after a change: rewritten when what it holds changed, dropped when it holds no one. */
async function rehold(holds: HoldWriter, changes: Changes, before: repository.VisitRow, after: repository.VisitRow): Promise<void> {
  const held = holdsUsers(before);
  const holding = holdsUsers(after);
  const same =
    held === holding &&
    before.startsAt.getTime() === after.startsAt.getTime() &&
    before.endsAt.getTime() === after.endsAt.getTime() &&
    before.assignedUserIds.join(',') === after.assignedUserIds.join(',');
  if (same) return;
  if (holding) {
    await holds.hold(changes.tx, changes.companyId, {
      owner: { visitUuid: after.uuid },
      users: heldUsers(after.assignedUserIds),
      startsAt: after.startsAt,
      endsAt: after.endsAt,
    });
  } else if (held) {
    await holds.release(changes.tx, changes.companyId, { visitUuid: after.uuid });
  }
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdateVisitBody): Promise<VisitResponse> {
  const companyId = actor.companyId;
  return guardHolds(db, companyId, (holds) =>
    recordChanges(db, actor, async (changes) => {
      const { tx } = changes;
      const current = await changes.target<repository.VisitRow>('visit', uuid);
      const timeZone = body.time_zone ?? current.timeZone;
      // Changing time_zone alone keeps the instants; a local form is read in the new zone.
      const interval = requestedInterval(body, timeZone, { required: false }) ?? { startsAt: current.startsAt, endsAt: current.endsAt };
      if (body.assigned_user_ids) await requireUsers(tx, companyId, body.assigned_user_ids);
      const moved = visitStatusChange(current, body.status, new Date());
      const values: Partial<repository.VisitInsert> = {
        ...(body.title !== undefined ? { title: body.title } : {}),
        ...(body.instructions !== undefined ? { instructions: body.instructions } : {}),
        ...(body.arrival_window_minutes !== undefined ? { arrivalWindowMinutes: body.arrival_window_minutes } : {}),
        ...(body.assigned_user_ids !== undefined ? { assignedUserIds: body.assigned_user_ids } : {}),
        ...(body.allow_overlap !== undefined ? { allowOverlap: body.allow_overlap } : {}),
        timeZone,
        startsAt: interval.startsAt,
        endsAt: interval.endsAt,
        ...(moved ?? {}),
      };
      const after = await repository.updateVisit(tx, companyId, uuid, values);
      if (!after) throw invalidField('uuid', 'is not a live visit');
      await rehold(holds, changes, current, after);
      return changes.answer('visit', uuid);
    }),
  );
}

function remove(db: Db, actor: Actor, uuid: string): Promise<void> {
  return removeHolder(db, actor, { objectType: 'visit', table: visits, uuid, owner: { visitUuid: uuid } });
}

function checkWindow(query: ListVisitsQuery): void {
  if (query.from && query.to && query.to <= query.from) throw invalidField('to', 'must be after from');
}

declare module '../changes/change-recorder.js' {
  interface RecordedObjects {
    visit: VisitResponse;
  }
}

/** How a visit is read: by its GET and by the change recorder (listed in events/recorded-types.ts). */
export const visitsRecords: RecordedType<VisitResponse> = {
  table: visits,
  noun: 'Visit',
  embeds: ['job', 'assigned_users'],
  async find(db, companyId, uuid, includeDeleted) {
    const found = await repository.findVisit(db, companyId, uuid, { includeDeleted });
    return found && toVisitResponse(found);
  },
  async lockAndLoad(db, companyId, uuid, includeDeleted) {
    const found = await repository.findVisit(db, companyId, uuid, { includeDeleted, lock: true });
    return found && { row: found.visit, record: toVisitResponse(found) };
  },
};

export const visitsService: CrudService<VisitResponse, VisitResponse, CreateVisitBody, UpdateVisitBody, ListVisitsQuery> = {
  list: async (db, companyId, query) => {
    checkWindow(query);
    return mapPage(await repository.listVisits(db, companyId, query), toVisitResponse);
  },
  // A technician's window, the schedule's hot read, is answered in the JSON text PostgreSQL makes.
  listJson: async (db, companyId, query) => {
    checkWindow(query);
    if (!repository.isTechnicianWindow(query)) return null;
    return repository.technicianWindowPage(db, companyId, query);
  },
  get: (db, companyId, uuid, includeDeleted) => getRecord(visitsRecords, db, companyId, uuid, includeDeleted),
  create,
  update,
  remove,
};
