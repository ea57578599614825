import { and, asc, desc, eq, isNull } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { apiKeys, companies, users } from '../../db/schema/index.js';

/** The queries of provisioning (the admin CLI, the demo bootstrap, the tests). Keys are issued by the api-keys module. */

/** A live user of the company, or null. */
export async function findLiveUser(db: Db, companyId: string, userId: string): Promise<{ id: string } | null> {
  const [user] = await db
    .select({ id: users.uuid })
    .from(users)
    .where(and(eq(users.companyId, companyId), eq(users.uuid, userId), isNull(users.deletedAt)))
    .limit(1);
  return user ?? null;
}

/** The company's first live user (its owner), or null. */
export async function findOwner(db: Db, companyId: string): Promise<{ id: string } | null> {
  const [owner] = await db
    .select({ id: users.uuid })
    .from(users)
    .where(and(eq(users.companyId, companyId), isNull(users.deletedAt)))
    .orderBy(asc(users.createdAt), asc(users.uuid))
    .limit(1);
  return owner ?? null;
}

/** Revokes the active key with this prefix; false when there is none. */
export async function revokeKeyByPrefix(db: Db, keyPrefix: string, now = new Date()): Promise<boolean> {
  const revoked = await db
    .update(apiKeys)
    .set({ revokedAt: now })
    .where(and(eq(apiKeys.keyPrefix, keyPrefix), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return revoked.length > 0;
}

/** A live company (not a sandbox), or null. */
export async function findLiveCompany(db: Db, companyId: string): Promise<{ uuid: string } | null> {
  const [company] = await db
    .select({ uuid: companies.uuid })
    .from(companies)
    .where(and(eq(companies.uuid, companyId), isNull(companies.sandboxOf)))
    .limit(1);
  return company ?? null;
}

/** Every live company (sandboxes are part of theirs), oldest first, with its settings. */
export function selectCompanies(db: Db) {
  return db
    .select({
      uuid: companies.uuid,
      name: companies.name,
      email: companies.email,
      addons: companies.addons,
      monthlyRequestLimit: companies.monthlyRequestLimit,
      createdAt: companies.createdAt,
    })
    .from(companies)
    .where(isNull(companies.sandboxOf))
    .orderBy(asc(companies.createdAt), asc(companies.uuid));
}

/** A company's keys with their users, newest first, revoked ones included. */
export function selectApiKeysOfCompany(db: Db, companyId: string) {
  return db
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      keyPrefix: apiKeys.keyPrefix,
      mode: apiKeys.mode,
      scopes: apiKeys.scopes,
      userId: apiKeys.userId,
      firstName: users.firstName,
      lastName: users.lastName,
      allowedIps: apiKeys.allowedIps,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
      expiresAt: apiKeys.expiresAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(users, and(eq(users.companyId, apiKeys.companyId), eq(users.uuid, apiKeys.userId)))
    .where(eq(apiKeys.companyId, companyId))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

export async function anyCompanyExists(db: Db): Promise<boolean> {
  const rows = await db.select({ uuid: companies.uuid }).from(companies).limit(1);
  return rows.length > 0;
}
