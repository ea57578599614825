import { and, eq, sql } from 'drizzle-orm';
import { OUTSIDE_FEED } from '../../db/bookkeeping.js';
import type { Db } from '../../db/client.js';
import { idempotencyKeys } from '../../db/schema/index.js';

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

/**
 * Holds the company's key until the transaction ends: a transaction-level advisory lock on a hash of it,
 * waited for while another transaction holds it. It writes nothing, so it gives the transaction no id.
 */
export async function holdKey(tx: Db, companyId: string, key: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${companyId}::text || '/' || ${key}::text, 0))`);
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

/**
 * Deletes up to `batchSize` records older than the cutoff, every company's, in one short statement whose
 * transaction holds no events feed back (OUTSIDE_FEED); returns how many.
 */
export async function purgeBatchBefore(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  const result = (await db.execute(sql`delete from ${idempotencyKeys} as expiring
    using (select ctid from ${idempotencyKeys} where ${idempotencyKeys.createdAt} < ${cutoff.toISOString()}::timestamptz limit ${batchSize}) as expired,
      ${OUTSIDE_FEED} as bookkeeping
    where expiring.ctid = expired.ctid
    returning 1 as deleted`)) as unknown as { rows: unknown[] };
  return result.rows.length;
}
