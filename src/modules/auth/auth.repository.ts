import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { apiKeys, companies } from '../../db/schema/index.js';

export interface KeyRecord {
  apiKeyId: string;
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
