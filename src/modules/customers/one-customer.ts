import { invalidField } from '../../errors.js';

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
