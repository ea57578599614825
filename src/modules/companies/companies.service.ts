import type { Db } from '../../db/client.js';
import { notFound } from '../../errors.js';
import { toCompanyResponse } from './companies.mapper.js';
import { findCompany } from './companies.repository.js';
import type { CompanyResponse } from './companies.schemas.js';

/**
 * The company a key belongs to. A test key works on the company's sandbox (DECISIONS §12), a data space of the
 * same company: it answers the company's own record, as the sandbox's users are the company's users.
 */
export async function getCompany(db: Db, companyId: string): Promise<CompanyResponse> {
  const row = await findCompany(db, companyId);
  const company = row?.sandboxOf ? await findCompany(db, row.sandboxOf) : row;
  if (!company) throw notFound('Company');
  return toCompanyResponse(company);
}
