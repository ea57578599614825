import type { RecordedTypes } from '../changes/change-recorder.js';
import { customerRecords } from '../customers/customers.service.js';
import { estimateRecords } from '../estimates/estimates.service.js';
import { invoiceRecords } from '../invoices/invoices.service.js';
import { jobPhotoRecords } from '../job-photos/job-photos.service.js';
import { jobRecords } from '../jobs/jobs.service.js';
import { locationRecords } from '../locations/locations.service.js';
import { paymentRecords } from '../payments/payments.service.js';
import { templateRecords } from '../templates/templates.service.js';
import { timeOffRecords } from '../time-off/time-off.service.js';
import { visitsRecords } from '../visits/visits.service.js';

/**
 * The change data wiring: every recorded object type (DECISIONS §9.1) and how the change recorder reads
 * it, each loader defined by its own module. The app hands this registry to the recorder as it is built;
 * the recorder itself knows no resource.
 */
export const RECORDED_TYPES: RecordedTypes = {
  location: locationRecords,
  customer: customerRecords,
  job: jobRecords,
  job_photo: jobPhotoRecords,
  template: templateRecords,
  estimate: estimateRecords,
  invoice: invoiceRecords,
  payment: paymentRecords,
  visit: visitsRecords,
  time_off: timeOffRecords,
};
