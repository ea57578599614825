import type { Db } from '../../db/client.js';
import { AppError } from '../../errors.js';
import * as repository from './idempotency.repository.js';

export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** A claim still in progress after this long belongs to a request that died; it may be taken over. */
export const ABANDONED_AFTER_MS = 2 * 60 * 1000;
const WAIT_FOR_FIRST_MS = 10_000;
const POLL_MS = 25;

export interface Replay {
  kind: 'replay';
  status: number;
  body: string;
}
export type IdempotencyOutcome = { kind: 'execute' } | Replay;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Stripe's semantics: the first request with a key runs and its response is kept for 24 h; a retry with the
 * same key and request gets that response again; the same key with another request is 400; a retry while
 * the first is still running waits for it, and gets 409 if it takes too long. Never a second write.
 */
export async function beginIdempotent(
  db: Db,
  companyId: string,
  key: string,
  fingerprint: string,
): Promise<IdempotencyOutcome> {
  const deadline = Date.now() + WAIT_FOR_FIRST_MS;
  let claimable = true;
  for (;;) {
    // Expired records are purged on a schedule (purgeExpiredKeys); an expired one met here is released below.
    if (claimable && (await repository.claimKey(db, companyId, key, fingerprint))) return { kind: 'execute' };
    const existing = await repository.findKey(db, companyId, key);
    // Gone (a failed first request released it): claim it now.
    claimable = existing === null;
    if (!existing) continue;
    const age = Date.now() - existing.createdAt.getTime();
    const abandoned = existing.state === 'in_progress' && age > ABANDONED_AFTER_MS;
    if (age > KEY_LIFETIME_MS || abandoned) {
      // Only the waiter that removes this very record may claim the key again.
      claimable = await repository.releaseKey(db, companyId, key, existing.createdAt);
      if (!claimable) await sleep(POLL_MS);
      continue;
    }
    if (existing.fingerprint !== fingerprint) throw reusedKey();
    if (existing.state === 'completed' && existing.responseStatus !== null && existing.responseBody !== null) {
      return { kind: 'replay', status: existing.responseStatus, body: existing.responseBody };
    }
    if (Date.now() > deadline) {
      throw new AppError('conflict', 'A request with this Idempotency-Key is still in progress; retry later.');
    }
    await sleep(POLL_MS);
  }
}

/** The same key with another request: 400 naming the header. */
function reusedKey(): AppError {
  return new AppError(
    'validation_error',
    'This Idempotency-Key was already used with a different request; use a new key.',
    [{ field: 'Idempotency-Key', code: 'invalid', message: 'was used with a different request' }],
  );
}

/**
 * For a route whose write completes its key in its own transaction (shared/keyed-writes.ts): nothing is
 * written before the work. A completed key answers its kept response (or 400 for another request); an
 * expired one is released; no record means the request runs, and its transaction completes the key. A key
 * claimed in progress (by a route that claims first) is waited for as beginIdempotent does.
 */
export async function lookupIdempotent(db: Db, companyId: string, key: string, fingerprint: string): Promise<IdempotencyOutcome> {
  const existing = await repository.findKey(db, companyId, key);
  if (!existing) return { kind: 'execute' };
  if (Date.now() - existing.createdAt.getTime() > KEY_LIFETIME_MS) {
    await repository.releaseKey(db, companyId, key, existing.createdAt);
    return { kind: 'execute' };
  }
  if (existing.fingerprint !== fingerprint) throw reusedKey();
  if (existing.state === 'completed' && existing.responseStatus !== null && existing.responseBody !== null) {
    return { kind: 'replay', status: existing.responseStatus, body: existing.responseBody };
  }
  const outcome = await beginIdempotent(db, companyId, key, fingerprint);
  // Claimed here after all (the claim it waited for was released): give the claim back, the work's
  // transaction completes the key.
  if (outcome.kind === 'execute') await repository.releaseKey(db, companyId, key);
  return outcome;
}

/**
 * The answer of a keyed request whose transaction completed no key (a refusal made by the service, or a
 * route that keeps its answer afterwards): kept now. When another request completed the key meanwhile,
 * that request's answer (a replay) is returned instead, or null when the key is kept with this answer.
 */
export async function keepAnswer(
  db: Db,
  companyId: string,
  key: string,
  fingerprint: string,
  status: number,
  body: string,
): Promise<Replay | null> {
  if (await repository.insertCompletedKey(db, companyId, key, fingerprint, status, body)) return null;
  return replayOf(db, companyId, key, fingerprint);
}

/** The kept answer of a key another request completed, or null when there is none to give. */
export async function replayOf(db: Db, companyId: string, key: string, fingerprint: string): Promise<Replay | null> {
  const existing = await repository.findKey(db, companyId, key);
  if (!existing || existing.fingerprint !== fingerprint || existing.state !== 'completed') return null;
  if (existing.responseStatus === null || existing.responseBody === null) return null;
  return { kind: 'replay', status: existing.responseStatus, body: existing.responseBody };
}

/** Replaces the answer a transaction kept when the answer sent differs from it. */
export function replaceAnswer(db: Db, companyId: string, key: string, body: string): Promise<void> {
  return repository.replaceAnswer(db, companyId, key, body);
}

/** Deletes every record older than KEY_LIFETIME_MS; returns how many (src/plugins/idempotency-purge.ts runs it). */
export function purgeExpiredKeys(db: Db, now = Date.now()): Promise<number> {
  return repository.purgeAllBefore(db, new Date(now - KEY_LIFETIME_MS));
}

export async function finishIdempotent(db: Db, companyId: string, key: string, status: number, body: string) {
  // Server errors are not kept, so the client can retry the same key.
  if (status >= 500) await repository.releaseKey(db, companyId, key);
  else await repository.completeKey(db, companyId, key, status, body);
}
