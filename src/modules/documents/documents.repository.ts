import type { Db } from '../../db/client.js';
import { estimates } from '../../db/schema/index.js';
import { findRow } from '../../shared/tenant-table.js';

/** The signature an estimate was accepted with (not part of its API record). */
export async function findEstimateSignature(db: Db, companyId: string, uuid: string) {
  const row = await findRow(db, estimates, companyId, uuid);
  return row && row.signatureName !== null ? { name: row.signatureName, signedAt: row.signedAt } : null;
}

