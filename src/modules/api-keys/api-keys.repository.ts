import { and, count, desc, eq, isNull, lte, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { apiKeyRolledSecrets, apiKeys, type KeyMode } from '../../db/schema/index.js';
import { paginate } from '../../shared/tenant-table.js';
import type { ListApiKeysQuery } from './api-keys.schemas.js';

export type ApiKeyInsert = typeof apiKeys.$inferInsert;

/** The columns the API shows: never the secret's hash. */
const keyColumns = {
  id: apiKeys.id,
  name: apiKeys.name,
  keyPrefix: apiKeys.keyPrefix,
  mode: apiKeys.mode,
  scopes: apiKeys.scopes,
  allowedIps: apiKeys.allowedIps,
  userId: apiKeys.userId,
  createdAt: apiKeys.createdAt,
  lastUsedAt: apiKeys.lastUsedAt,
  expiresAt: apiKeys.expiresAt,
  revokedAt: apiKeys.revokedAt,
};

export interface ApiKeyRow {
  id: string;
  name: string | null;
  keyPrefix: string;
  mode: KeyMode;
  scopes: string[];
  allowedIps: string[];
  userId: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

/** Which keys a caller may see: its company's, of one mode (a test key) or of both (mode null). */
export interface KeyScopeFilter {
  companyId: string;
  mode: KeyMode | null;
}

function visible(filter: KeyScopeFilter, includeRevoked: boolean): SQL {
  return and(
    eq(apiKeys.companyId, filter.companyId),
    filter.mode ? eq(apiKeys.mode, filter.mode) : undefined,
    includeRevoked ? undefined : isNull(apiKeys.revokedAt),
  ) as SQL;
}

export function listKeys(db: Db, filter: KeyScopeFilter, query: ListApiKeysQuery) {
  const where = visible(filter, query.include_deleted);
  return paginate(
    query,
    (offset, limit) =>
      db.select(keyColumns).from(apiKeys).where(where).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id)).limit(limit).offset(offset),
    async () => (await db.select({ total: count() }).from(apiKeys).where(where))[0].total,
  );
}

/** A visible key (unrevoked unless includeRevoked), or null; `lock` holds it FOR UPDATE. */
export async function findKey(
  db: Db,
  filter: KeyScopeFilter,
  uuid: string,
  options: { includeRevoked?: boolean; lock?: boolean } = {},
): Promise<ApiKeyRow | null> {
  const query = db
    .select(keyColumns)
    .from(apiKeys)
    .where(and(visible(filter, options.includeRevoked ?? false), eq(apiKeys.id, uuid)))
    .limit(1);
  const [row] = await (options.lock ? query.for('update') : query);
  return row ?? null;
}

export async function insertKey(db: Db, values: ApiKeyInsert): Promise<ApiKeyRow> {
  const [row] = await db.insert(apiKeys).values(values).returning(keyColumns);
  return row;
}

export async function updateKey(
  db: Db,
  uuid: string,
  values: Partial<Pick<ApiKeyInsert, 'name' | 'scopes' | 'allowedIps' | 'expiresAt' | 'keyPrefix' | 'keyHash' | 'revokedAt'>>,
): Promise<ApiKeyRow> {
  const [row] = await db.update(apiKeys).set(values).where(eq(apiKeys.id, uuid)).returning(keyColumns);
  return row;
}

/** The key's current secret: what a roll keeps working for a grace period. */
export async function currentSecret(db: Db, uuid: string): Promise<{ keyPrefix: string; keyHash: string }> {
  const [row] = await db.select({ keyPrefix: apiKeys.keyPrefix, keyHash: apiKeys.keyHash }).from(apiKeys).where(eq(apiKeys.id, uuid));
  return row;
}

/** Keeps an old secret working until `expiresAt`. */
export async function insertRolledSecret(db: Db, apiKeyId: string, secret: { keyPrefix: string; keyHash: string }, expiresAt: Date) {
  await db.insert(apiKeyRolledSecrets).values({ apiKeyId, keyPrefix: secret.keyPrefix, keyHash: secret.keyHash, expiresAt });
}

/** Removes the key's old secrets whose grace period has ended, or all of them (a revoke). */
export async function deleteRolledSecrets(db: Db, apiKeyId: string, options: { all: boolean }) {
  await db
    .delete(apiKeyRolledSecrets)
    .where(and(eq(apiKeyRolledSecrets.apiKeyId, apiKeyId), options.all ? undefined : lte(apiKeyRolledSecrets.expiresAt, sql`now()`)));
}
