import { sql } from 'drizzle-orm';
import type { Actor } from '../auth/principal.js';
import { AppError } from '../errors.js';
import type { Db } from '../db/client.js';
import { idempotencyKeys } from '../db/schema/index.js';
import { executePrepared } from '../db/perf/prepared.js';

/**
 * Idempotency keys that complete with their work (Stripe's atomic phases, in one phase): the write's own
 * transaction inserts the key's row, completed with its answer, before it commits. So a committed write
 * always has its completed key and an uncommitted one never has one; a commit whose outcome is unknown (the
 * connection lost during COMMIT) leaves either both or neither, and the retry replays or runs once. No row
 * is ever "in progress" for others to see: a concurrent request with the same key blocks on the key's
 * unique index until the first transaction ends, then fails on it (the first committed: it answers with
 * the first request's answer) or goes on (the first rolled back).
 */

/** The primary key of idempotency_keys, whose violation means another request completed the key first. */
const KEY_CONSTRAINT = 'idempotency_keys_company_id_key_pk';

/** The row that completes a keyed write whose answer is `data`, or null when the write is not keyed. */
export interface KeyCompletion {
  companyId: string;
  key: string;
  fingerprint: string;
  status: number;
  body: string;
  recordUuid: string | null;
}

/**
 * The completion of the actor's key for a write answering `data` (null when the request has no key or a
 * transaction already completed it). `recordUuid` names the record the write created, if it did.
 */
export function keyCompletion(actor: Pick<Actor, 'idempotency'>, data: unknown, recordUuid: string | null = null): KeyCompletion | null {
  const keyed = actor.idempotency;
  if (!keyed || keyed.completed !== undefined || keyed.taken) return null;
  const { status, body } = keyed.answerOf(data);
  return { companyId: keyed.companyId, key: keyed.key, fingerprint: keyed.fingerprint, status, body, recordUuid };
}

/** Marks the actor's key completed by the transaction about to commit (call once its statement has run). */
export function markCompleted(actor: Pick<Actor, 'idempotency'>, completion: KeyCompletion | null): void {
  if (completion && actor.idempotency) actor.idempotency.completed = completion.body;
}

/** Inserts the key's completed row in the transaction `tx`; a no-op without a completion. */
export async function insertKeyCompletion(tx: Db, completion: KeyCompletion | null): Promise<void> {
  if (!completion) return;
  await executePrepared(
    tx,
    'complete_idempotency_key',
    () => sql`insert into ${idempotencyKeys} (company_id, key, fingerprint, state, response_status, response_body, record_uuid)
      values (${sql.placeholder('companyId')}::uuid, ${sql.placeholder('key')}, ${sql.placeholder('fingerprint')}, 'completed',
        ${sql.placeholder('status')}::int, ${sql.placeholder('body')}, ${sql.placeholder('recordUuid')}::uuid)`,
    { ...completion },
  );
}

/** The PostgreSQL error inside a query error (Drizzle wraps the driver's), or null. */
function postgresError(error: unknown): { code?: string; constraint?: string } | null {
  for (let cause: unknown = error, depth = 0; cause && depth < 4; depth++) {
    const found = cause as { code?: string; constraint?: string; cause?: unknown };
    if (typeof found.code === 'string' && /^[0-9A-Z]{5}$/.test(found.code)) return found;
    cause = found.cause;
  }
  return null;
}

/** Whether the error is the key's unique index refusing a second completion (the key was completed meanwhile). */
export function isKeyTaken(error: unknown): boolean {
  const found = postgresError(error);
  return found?.code === '23505' && found.constraint === KEY_CONSTRAINT;
}

/** Whether the error is a statement cancelled by its timeout (statement_timeout). */
export function isStatementTimeout(error: unknown): boolean {
  return postgresError(error)?.code === '57014';
}

/**
 * The error a keyed write ends with when another request completed its key first. Its work was rolled
 * back; the idempotency plugin answers the other request's answer instead (a replay).
 */
export class KeyTakenError extends AppError {
  constructor() {
    // Answered only if the replay cannot be read: the client retries and gets it then.
    super('conflict', 'A request with this Idempotency-Key completed meanwhile; retry to get its answer.');
  }
}

/**
 * Runs a keyed write (one that completes the actor's key in its transaction): a failure on the key's unique
 * index becomes KeyTakenError, and the actor's key is marked taken so that the answer is the replay.
 */
export async function keyedWrite<T>(actor: Pick<Actor, 'idempotency'>, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (actor.idempotency && isKeyTaken(error)) {
      actor.idempotency.completed = undefined;
      actor.idempotency.taken = true;
      throw new KeyTakenError();
    }
    // The transaction did not commit (or its outcome is unknown): the key is not completed by this request.
    if (actor.idempotency) actor.idempotency.completed = undefined;
    throw error;
  }
}

/**
 * For a write run in a transaction of its own making (not recordChanges): completes the actor's key with
 * the answer `data` inside `tx`. Call it last in the transaction, and run the transaction in keyedWrite.
 */
export async function completeKeyInTransaction(tx: Db, actor: Pick<Actor, 'idempotency'>, data: unknown, recordUuid: string | null = null): Promise<void> {
  const completion = keyCompletion(actor, data, recordUuid);
  await insertKeyCompletion(tx, completion);
  markCompleted(actor, completion);
}
