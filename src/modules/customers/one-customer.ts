import type { Db } from '../../db/client.js';
import { customers, locations } from '../../db/schema/index.js';
import { invalidField } from '../../errors.js';
import { requireReference } from '../../shared/tenant-table.js';

/** A record a document names whose customer it must share: the job, or the estimate an invoice bills. */
export interface CustomerSource {
  field: 'job_uuid' | 'estimate_uuid';
  customerUuid: string;
}

/**
 * One customer per document (DECISIONS.md §8): an estimate's or invoice's customer is the customer of its
 * job and of its estimate, so a document never silently bills someone else. On create the customer_uuid
 * is named; on an update that moves the document to another job, that job_uuid is (the customer is fixed).
 */
export function requireOneCustomer(
  document: 'estimate' | 'invoice',
  customerUuid: string,
  sources: ReadonlyArray<CustomerSource | null>,
  blame: 'customer_uuid' | 'source' = 'customer_uuid',
): void {
  for (const source of sources) {
    if (!source || source.customerUuid === customerUuid) continue;
    const noun = source.field === 'job_uuid' ? 'job' : 'estimate';
    throw blame === 'customer_uuid'
      ? invalidField('customer_uuid', `must be the customer of the ${noun} (${source.field})`, 'invalid_reference')
      : invalidField(source.field, `must be a ${noun} of the ${document}'s customer (customer_uuid)`, 'invalid_reference');
  }
}

/**
 * What a preview checks of the ids its body names, as create does, without a lock (DECISIONS §2: another
 * company's record, or none, is 400): customer_uuid and location_uuid must be live records of the company,
 * and the job and estimate (found by the caller, 400 when missing) the customer's when one is named.
 */
export async function requirePreviewReferences(
  db: Db,
  companyId: string,
  document: 'estimate' | 'invoice',
  body: { customer_uuid?: string; location_uuid?: string | null },
  sources: ReadonlyArray<CustomerSource | null>,
): Promise<void> {
  await requireReference(db, customers, companyId, 'customer_uuid', body.customer_uuid);
  if (body.customer_uuid) requireOneCustomer(document, body.customer_uuid, sources);
  await requireReference(db, locations, companyId, 'location_uuid', body.location_uuid);
}
