import type { Db } from '../../db/client.js';
import { notFound } from '../../errors.js';
import { toCompanyResponse } from './companies.mapper.js';
import { findCompany } from './companies.repository.js';
import type { CompanyResponse } from './companies.schemas.js';

export async function getCompany(db: Db, companyId: string): Promise<CompanyResponse> {
  const row = await findCompany(db, companyId);
  if (!row) throw notFound('Company');
  return toCompanyResponse(row);
}
