import type { Db } from '../../db/client.js';
import { bookingInputs, type BookingInputs, type VersionedUser } from './visits.repository.js';

/**
 * What visit bookings read (a job with its version and default time zone, users with their versions), kept
 * by each instance between bookings. Nothing kept is trusted: the booking's statement writes only if the job
 * and the users are still the versions kept and the default zone still the one kept (bookingGuard), so a
 * stale entry costs one refused statement and a fresh read, never a wrong write.
 */
const keptJobs = new Map<string, Omit<BookingInputs, 'users'>>();
const keptUsers = new Map<string, VersionedUser>();
/** Entries of each kind at most; beyond, the oldest goes first. */
const KEPT = 10_000;

function keep<T>(map: Map<string, T>, key: string, value: T): void {
  map.delete(key);
  if (map.size >= KEPT) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/** The inputs of a booking as kept, or undefined when the job or one of the users is not. */
export function keptBookingInputs(companyId: string, jobUuid: string, userIds: readonly string[]): BookingInputs | undefined {
  const job = keptJobs.get(`${companyId} ${jobUuid}`);
  if (!job) return undefined;
  const users: VersionedUser[] = [];
  for (const id of userIds) {
    const user = keptUsers.get(`${companyId} ${id}`);
    if (!user) return undefined;
    users.push(user);
  }
  return { ...job, users };
}

/** The inputs of a booking read afresh (null: no live job), and kept. */
export async function readBookingInputs(db: Db, companyId: string, jobUuid: string, userIds: readonly string[]): Promise<BookingInputs | null> {
  const inputs = await bookingInputs(db, companyId, jobUuid, userIds);
  if (!inputs) {
    keptJobs.delete(`${companyId} ${jobUuid}`);
    return null;
  }
  keep(keptJobs, `${companyId} ${jobUuid}`, { job: inputs.job, timeZone: inputs.timeZone });
  for (const user of inputs.users) keep(keptUsers, `${companyId} ${user.id}`, user);
  return inputs;
}
