import { z } from 'zod';
import { EVENT_ACTIONS, EVENT_TYPES, OBJECT_TYPES, type EventType, type ObjectType } from '../../db/schema/index.js';
import { pageSize } from '../../shared/list-query.js';
import { timestampOutput, uuidString } from '../../shared/formats.js';
import { detail } from '../../shared/validation.js';
import { CustomerResponse } from '../customers/customers.schemas.js';
import { EstimateResponse } from '../estimates/estimates.schemas.js';
import { InvoiceResponse } from '../invoices/invoices.schemas.js';
import { JobPhotoResponse } from '../job-photos/job-photos.schemas.js';
import { JobResponse } from '../jobs/jobs.schemas.js';
import { LocationResponse } from '../locations/locations.schemas.js';
import { PaymentResponse } from '../payments/payments.schemas.js';
import { TemplateResponse } from '../templates/templates.schemas.js';
import { TimeOffResponse } from '../time-off/time-off.schemas.js';
import { VisitResponse } from '../visits/visits.schemas.js';

const RECORDS = {
  location: LocationResponse,
  customer: CustomerResponse,
  job: JobResponse,
  job_photo: JobPhotoResponse,
  template: TemplateResponse,
  estimate: EstimateResponse,
  invoice: InvoiceResponse,
  payment: PaymentResponse,
  visit: VisitResponse,
  time_off: TimeOffResponse,
} as const satisfies Record<ObjectType, z.ZodType>;

const pascal = (name: string) => name.replace(/(^|_)([a-z])/g, (_, __, char: string) => char.toUpperCase());

function eventSchema<T extends ObjectType>(objectType: T) {
  const types = EVENT_ACTIONS.map((action) => `${objectType}.${action}`) as [string, ...string[]];
  return z
    .object({
      uuid: z.string().describe('The event id; pass it as `after` to read the events that follow it.'),
      type: z.enum(types).describe(`${types.join(', ')}.`),
      object_type: z.literal(objectType),
      object_uuid: z.string().describe('The changed record.'),
      created_at: timestampOutput,
      data: z.object({
        object: RECORDS[objectType].describe('The record as its GET with include_deleted=true answered right after the change.'),
        previous_attributes: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('Only on .updated: each top-level field that changed (updated_at and embedded objects left out), with its value before.')
          .meta({ example: { status: 'Scheduled' } }),
      }),
    })
    .meta({ id: `${pascal(objectType)}Event` });
}

export const EventResponse = z
  .discriminatedUnion(
    'object_type',
    OBJECT_TYPES.map((type) => eventSchema(type)) as unknown as [ReturnType<typeof eventSchema>, ...Array<ReturnType<typeof eventSchema>>],
  )
  .meta({ id: 'Event', description: 'One committed change of one record (docs/events-and-webhooks.md); the schema of data.object follows object_type.' });

export type EventResponse = z.infer<typeof EventResponse>;

/** Room for every event type once, comma-separated, with spaces. */
const EVENT_TYPE_LIST_MAX = 2_000;

const eventTypeList = z
  .string()
  .max(EVENT_TYPE_LIST_MAX, `must be at most ${EVENT_TYPE_LIST_MAX} characters`)
  .transform((value, context) => {
    const types = value.split(',').map((type) => type.trim());
    const unknown = types.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
    if (unknown.length > 0) {
      // An invalid_enum message lists the allowed values (DECISIONS §1).
      context.addIssue({
        code: 'custom',
        message: `has unknown event type ${unknown.map((type) => `'${type}'`).join(', ')}; allowed: ${EVENT_TYPES.join(', ')}`,
        params: detail('invalid_enum'),
      });
      return z.NEVER;
    }
    return [...new Set(types)] as EventType[];
  });

export const ListEventsQuery = z.strictObject({
  after: uuidString.optional().describe('An event id of this feed: the page starts right after it. Absent: from the oldest kept event.'),
  limit: pageSize,
  type: eventTypeList.optional().describe('Event types, comma-separated (OR).').meta({ example: 'invoice.updated,payment.created' }),
  object_uuid: uuidString.optional().describe('Only the events of this record.'),
});
export type ListEventsQuery = z.infer<typeof ListEventsQuery>;

export const EventsPage = z
  .object({
    events: z.array(EventResponse).describe('Feed order, oldest first.'),
    has_more: z.boolean().describe('True when more events follow the last one; ask again with after = its uuid.'),
  })
  .meta({ id: 'EventPage' });
