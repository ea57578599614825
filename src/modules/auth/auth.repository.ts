import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { apiKeys, companies } from '../../db/schema/index.js';

export interface KeyRecord {
  apiKeyId: string;
  keyPrefix: string;
  companyId: string;
  userId: string;
  allowedIps: string[];
  addons: string[];
  monthlyRequestLimit: number | null;
}

/** The live key with this hash and its company's settings, or null. */
export async function findActiveKey(db: Db, keyHash: string): Promise<KeyRecord | null> {
  const [row] = await db
    .select({
      apiKeyId: apiKeys.id,
      keyPrefix: apiKeys.keyPrefix,
      companyId: apiKeys.companyId,
      userId: apiKeys.userId,
      allowedIps: apiKeys.allowedIps,
      addons: companies.addons,
      monthlyRequestLimit: companies.monthlyRequestLimit,
    })
    .from(apiKeys)
    .innerJoin(companies, eq(companies.uuid, apiKeys.companyId))
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  return row ?? null;
}

/**
 * Records that a key was used. Called when an instance loads the key (at most once per cache period) and
 * writes at most once a minute per key, so "last used" costs no write per request.
 */
export async function touchKeyLastUsed(db: Db, apiKeyId: string): Promise<void> {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: sql`now()` })
    .where(
      and(
        eq(apiKeys.id, apiKeyId),
        or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, sql`now() - interval '1 minute'`)),
      ),
    );
}
