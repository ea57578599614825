import type { Actor, KeyedWrite } from '../../auth/principal.js';
import { runsOneTransactionAtATime, type Db } from '../../db/client.js';
import { AppError } from '../../errors.js';
import { completeKeyInTransaction, isStatementTimeout, keyedWrite, KeyTakenError } from '../../shared/keyed-writes.js';
import * as repository from './idempotency.repository.js';

export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
/**
 * Keys are never committed in progress now: a route completes its key in the transaction of its work, or
 * keeps its answer after work that writes nothing (shared/keyed-writes.ts). A row in progress was claimed
 * by an instance of an older version during a rolling deploy; one younger than this may still belong to a
 * request running there (that version's own bound), an older one is released.
 */
export const LEGACY_CLAIM_MS = 2 * 60 * 1000;

export interface Replay {
  kind: 'replay';
  status: number;
  body: string;
}
export type IdempotencyOutcome = { kind: 'execute' } | Replay;

/** The same key with another request: 409 naming the header (DECISIONS §1: `conflict`, idempotency only). */
function reusedKey(): AppError {
  return new AppError(
    'conflict',
    'This Idempotency-Key was already used with a different request; use a new key.',
    [{ field: 'Idempotency-Key', code: 'invalid', message: 'was used with a different request' }],
  );
}

/** A request with the key is still running: 409, the client retries later. */
export function keyInProgress(): AppError {
  return new AppError('conflict', 'A request with this Idempotency-Key is still in progress; retry later.');
}

/**
 * Stripe's semantics, with nothing written before the work: a completed key answers its kept response (or
 * 400 for another request); an expired one is released; no record means the request runs, and the key is
 * completed with its work (or its answer kept after it). A request running with the same key meanwhile is
 * met by the work's transaction, on the key's unique index.
 */
export async function lookupIdempotent(db: Db, companyId: string, key: string, fingerprint: string): Promise<IdempotencyOutcome> {
  const existing = await repository.findKey(db, companyId, key);
  if (!existing) return { kind: 'execute' };
  const age = Date.now() - existing.createdAt.getTime();
  const legacyAbandoned = existing.state !== 'completed' && age > LEGACY_CLAIM_MS;
  if (age > KEY_LIFETIME_MS || legacyAbandoned) {
    await repository.releaseKey(db, companyId, key, existing.createdAt);
    return { kind: 'execute' };
  }
  if (existing.fingerprint !== fingerprint) throw reusedKey();
  if (existing.state === 'completed' && existing.responseStatus !== null && existing.responseBody !== null) {
    return { kind: 'replay', status: existing.responseStatus, body: existing.responseBody };
  }
  throw keyInProgress();
}

/**
 * The answer of a keyed request whose transaction completed no key (a refusal made by the service, or a
 * route that writes nothing): kept now. When another request completed the key meanwhile, that request's
 * answer (a replay) is returned instead, or null when the key is kept with this answer.
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

const PURGE_BATCH_SIZE = 1000;

/**
 * Deletes every record older than KEY_LIFETIME_MS, batch by batch, so no statement holds many rows or runs
 * long; returns how many (src/plugins/idempotency-purge.ts runs it).
 */
export async function purgeExpiredKeys(db: Db, now = Date.now(), batchSize = PURGE_BATCH_SIZE): Promise<number> {
  const cutoff = new Date(now - KEY_LIFETIME_MS);
  let total = 0;
  for (;;) {
    const deleted = await repository.purgeBatchBefore(db, cutoff, batchSize);
    total += deleted;
    if (deleted < batchSize) return total;
  }
}

/**
 * Work with an outside effect that cannot join a transaction (an email), then what it changes in the database
 * (`record`, given the effect's result, in a transaction). Without a key the effect runs first and its record
 * after. With a key, one transaction spans both and holds the key: its first statement takes a
 * transaction-level advisory lock on the key, and its last inserts the key completed with the answer, so the
 * key commits completed with the record or not at all. The lock writes nothing, so the transaction has no id
 * while the effect runs and holds no one's events feed back (its horizon waits for transactions with an id).
 * A concurrent request with the key waits on the lock until that transaction ends, then answers the first
 * answer (it committed: KeyTakenError) or runs (it rolled back); past its statement timeout it answers 409.
 * A holder that dies ends its transaction, and the hold, with its connection. The transaction keeps one
 * connection for the effect's duration. If the connection is lost at COMMIT after the effect was done, the
 * retry cannot know it and does the effect again.
 */
export async function withHeldKey<E, T>(
  db: Db,
  actor: Pick<Actor, 'idempotency'>,
  effect: () => Promise<E>,
  record: (tx: Db, done: E) => Promise<T>,
): Promise<T> {
  const keyed = actor.idempotency;
  if (!keyed) {
    const done = await effect();
    return db.transaction((tx) => record(tx, done));
  }
  if (runsOneTransactionAtATime(db)) return withLocalHold(db, actor, keyed, effect, record);
  return keyedWrite(actor, () =>
    db.transaction(async (tx) => {
      try {
        await repository.holdKey(tx, keyed.companyId, keyed.key);
      } catch (error) {
        if (!isStatementTimeout(error)) throw error;
        // Another request holds the key: this one's 409 is not kept (its retry must run or replay).
        keyed.taken = true;
        throw keyInProgress();
      }
      // The request that held the key before this one completed it: its answer is this one's.
      if (await repository.findKey(tx, keyed.companyId, keyed.key)) {
        keyed.taken = true;
        throw new KeyTakenError();
      }
      const value = await record(tx, await effect());
      await completeKeyInTransaction(tx, actor, value);
      return value;
    }),
  );
}

/** Keys held in this process, by company and key: see withLocalHold. */
const localHolds = new Map<string, Promise<unknown>>();

/**
 * withHeldKey on the embedded database: one process, and one transaction at a time that every other
 * statement waits for, so a transaction must not span the effect. The key is held in this process instead
 * (it ends with the process); a request that waited for it answers the kept answer when the holder completed
 * the key. The record and the key's completion then commit in one transaction.
 */
async function withLocalHold<E, T>(
  db: Db,
  actor: Pick<Actor, 'idempotency'>,
  keyed: KeyedWrite,
  effect: () => Promise<E>,
  record: (tx: Db, done: E) => Promise<T>,
): Promise<T> {
  const name = `${keyed.companyId}\n${keyed.key}`;
  while (localHolds.has(name)) await localHolds.get(name)!.catch(() => undefined);
  const held = (async () => {
    // The holder waited for may have completed the key meanwhile.
    if ((await lookupIdempotent(db, keyed.companyId, keyed.key, keyed.fingerprint)).kind === 'replay') {
      keyed.taken = true;
      throw new KeyTakenError();
    }
    const done = await effect();
    return keyedWrite(actor, () =>
      db.transaction(async (tx) => {
        const value = await record(tx, done);
        await completeKeyInTransaction(tx, actor, value);
        return value;
      }),
    );
  })();
  localHolds.set(name, held);
  try {
    return await held;
  } finally {
    localHolds.delete(name);
  }
}
