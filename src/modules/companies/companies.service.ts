import type { Db } from '../../db/client.js';
import { notFound } from '../../errors.js';
import { rowToRecord } from '../../shared/records.js';
import { findCompany } from './companies.repository.js';
import type { CompanyRecord } from './companies.schemas.js';

export async function getCompany(db: Db, companyId: string): Promise<CompanyRecord> {
  const row = await findCompany(db, companyId);
  if (!row) throw notFound('Company');
  return rowToRecord(row, {
    omit: ['addons', 'monthlyRequestLimit', 'createdAt', 'updatedAt'],
    // camelToSnake keeps a digit attached (address1); the company fields separate it (address_line_1).
    rename: { addressLine1: 'address_line_1', addressLine2: 'address_line_2' },
  }) as CompanyRecord;
}
