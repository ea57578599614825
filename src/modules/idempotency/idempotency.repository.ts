import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { idempotencyKeys } from '../../db/schema/index.js';

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

/**
 * Holds the key in the transaction `tx` for work with an outside effect (shared/keyed-writes.ts): a row in
 * progress that no other transaction sees, completed before the commit (completeHeldKey). A concurrent
 * insert of the key waits on its unique index until `tx` ends.
 */
export async function insertHeldKey(tx: Db, companyId: string, key: string, fingerprint: string): Promise<void> {
  await tx.insert(idempotencyKeys).values({ companyId, key, fingerprint, state: 'in_progress' });
}

export async function findKey(db: Db, companyId: string, key: string): Promise<IdempotencyRow | null> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.companyId, companyId), eq(idempotencyKeys.key, key)))
    .limit(1);
  return row ?? null;
}

/**
 * Keeps the answer of a keyed request that completed no key in a transaction of its own (a refusal, or a
 * route that writes nothing); false when the key was completed meanwhile.
 */
export async function insertCompletedKey(db: Db, companyId: string, key: string, fingerprint: string, status: number, body: string): Promise<boolean> {
  const inserted = await db
    .insert(idempotencyKeys)
    .values({ companyId, key, fingerprint, state: 'completed', responseStatus: status, responseBody: body })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  return inserted.length > 0;
}

/** Replaces a completed key's kept answer (the answer sent differed from the one kept in the transaction). */
export async function replaceAnswer(db: Db, companyId: string, key: string, body: string) {
  await db
    .update(idempotencyKeys)
    .set({ responseBody: body })
    .where(and(eq(idempotencyKeys.companyId, companyId), eq(idempotencyKeys.key, key), eq(idempotencyKeys.state, 'completed')));
}

/** Completes the key held in the transaction `tx` with its answer. */
export async function completeHeldKey(tx: Db, companyId: string, key: string, status: number, body: string): Promise<void> {
  await tx
    .update(idempotencyKeys)
    .set({ state: 'completed', responseStatus: status, responseBody: body })
    .where(and(eq(idempotencyKeys.companyId, companyId), eq(idempotencyKeys.key, key)));
}

/** Deletes the key's record as it was read (created at `createdAt`): an expired one, or an older version's abandoned claim. */
export async function releaseKey(db: Db, companyId: string, key: string, createdAt: Date): Promise<boolean> {
  const deleted = await db
    .delete(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.companyId, companyId),
        eq(idempotencyKeys.key, key),
        eq(idempotencyKeys.createdAt, createdAt),
      ),
    )
    .returning({ key: idempotencyKeys.key });
  return deleted.length > 0;
}

/** Drops every company's records older than the cutoff; the scheduled purge. */
export async function purgeAllBefore(db: Db, cutoff: Date): Promise<number> {
  const deleted = await db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.createdAt, sql`${cutoff.toISOString()}::timestamptz`))
    .returning({ key: idempotencyKeys.key });
  return deleted.length;
}
