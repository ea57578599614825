import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { OUTSIDE_FEED } from '../../db/bookkeeping.js';
import type { Db } from '../../db/client.js';
import { apiKeyRolledSecrets, apiKeys, companies, users, type KeyMode } from '../../db/schema/index.js';

export interface KeyRecord {
  apiKeyId: string;
  /** The prefix of the secret that matched (an old one during a roll's grace period). */
  keyPrefix: string;
  /** The company the key belongs to (the live one). */
  companyId: string;
  userId: string;
  mode: KeyMode;
  scopes: string[];
  allowedIps: string[];
  expiresAt: Date | null;
  /** When the matched secret stops working: the end of a roll's grace period, else null. */
  secretExpiresAt: Date | null;
  /** The live company's add-ons: a sandbox follows them. */
  addons: string[];
  monthlyRequestLimit: number | null;
  /** A test key's sandbox, when it exists and holds the key's user; else null (it is made on first use). */
  sandboxId: string | null;
}

const sandboxes = alias(companies, 'sandbox');
const sandboxUsers = alias(users, 'sandbox_user');

/** The key, its company's settings and, for a test key, its ready sandbox, matched by one of these conditions. */
function selectKey(db: Db) {
  return db
    .select({
      apiKeyId: apiKeys.id,
      keyPrefix: apiKeys.keyPrefix,
      companyId: apiKeys.companyId,
      userId: apiKeys.userId,
      mode: apiKeys.mode,
      scopes: apiKeys.scopes,
      allowedIps: apiKeys.allowedIps,
      expiresAt: apiKeys.expiresAt,
      addons: companies.addons,
      monthlyRequestLimit: companies.monthlyRequestLimit,
      sandboxId: sandboxUsers.companyId,
    })
    .from(apiKeys)
    .innerJoin(companies, eq(companies.uuid, apiKeys.companyId))
    .leftJoin(sandboxes, and(eq(apiKeys.mode, 'test'), eq(sandboxes.sandboxOf, apiKeys.companyId)))
    .leftJoin(sandboxUsers, and(eq(sandboxUsers.companyId, sandboxes.uuid), eq(sandboxUsers.uuid, apiKeys.userId)));
}

/**
 * The unrevoked key whose current secret has this hash, or whose secret rolled out within its grace period
 * has it, with its company's settings; null when there is none. Expiry is checked by the caller, per request.
 */
export async function findActiveKey(db: Db, keyHash: string): Promise<KeyRecord | null> {
  const [current] = await selectKey(db)
    .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
    .limit(1);
  if (current) return { ...current, secretExpiresAt: null };
  const [rolled] = await db
    .select({ apiKeyId: apiKeyRolledSecrets.apiKeyId, keyPrefix: apiKeyRolledSecrets.keyPrefix, expiresAt: apiKeyRolledSecrets.expiresAt })
    .from(apiKeyRolledSecrets)
    .where(and(eq(apiKeyRolledSecrets.keyHash, keyHash), gt(apiKeyRolledSecrets.expiresAt, sql`now()`)))
    .limit(1);
  if (!rolled) return null;
  const [key] = await selectKey(db)
    .where(and(eq(apiKeys.id, rolled.apiKeyId), isNull(apiKeys.revokedAt)))
    .limit(1);
  return key ? { ...key, keyPrefix: rolled.keyPrefix, secretExpiresAt: rolled.expiresAt } : null;
}

/**
 * Sets last_used_at of each key to the time (ms since the epoch) an instance last saw it, in one statement.
 * A value never moves back (another instance may have written a later one).
 */
export async function recordKeysLastUsed(db: Db, usedAt: ReadonlyMap<string, number>): Promise<void> {
  if (usedAt.size === 0) return;
  const rows = [...usedAt].map(([id, at]) => sql`(${id}::uuid, ${new Date(at).toISOString()}::timestamptz)`);
  await db
    .update(apiKeys)
    .set({ lastUsedAt: sql`greatest(${apiKeys.lastUsedAt}, used.at)` })
    .from(sql`(values ${sql.join(rows, sql`, `)}) as used(id, at) cross join ${OUTSIDE_FEED} as bookkeeping`)
    .where(eq(apiKeys.id, sql`used.id`));
}
