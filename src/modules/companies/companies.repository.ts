import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { companies } from '../../db/schema/index.js';

export type CompanyRow = typeof companies.$inferSelect;
export type CompanyInsert = typeof companies.$inferInsert;

export function findCompany(db: Db, companyId: string) {
  return db
    .select()
    .from(companies)
    .where(eq(companies.uuid, companyId))
    .limit(1)
    .then((rows) => rows[0] ?? null);
}

export async function insertCompany(db: Db, values: CompanyInsert): Promise<CompanyRow> {
  const [row] = await db.insert(companies).values(values).returning();
  return row;
}

export async function updateCompanySettings(
  db: Db,
  companyId: string,
  values: Partial<Pick<CompanyInsert, 'addons' | 'monthlyRequestLimit'>>,
) {
  const [row] = await db
    .update(companies)
    .set({ ...values, updatedAt: new Date() })
    .where(eq(companies.uuid, companyId))
    .returning({ uuid: companies.uuid });
  return row ?? null;
}
