import { z } from 'zod';
import { timestampOutput, nullableString, uuidString } from '../../shared/formats.js';
import { listQueryShape } from '../../shared/list-query.js';
import { detail } from '../../shared/validation.js';
import { DELIVERY_STATUSES, EVENT_TYPES } from '../../db/schema/index.js';

export const MAX_URL_LENGTH = 2048;

const webhookUrl = z
  .string()
  .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`)
  .refine((value) => {
    // The URL as written, not as a parser repairs it: no spaces or control characters (RFC 3986), no port 0.
    if (/[\s\x00-\x1f\x7f]/.test(value) || !URL.canParse(value)) return false;
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.port !== '0';
  }, { message: 'must be an absolute http or https URL', params: detail('invalid_format') })
  .describe('Where deliveries are POSTed: an absolute http or https URL of at most 2048 characters, on a public address.')
  .meta({ example: 'https://hooks.example.com/crm' });

export const DeliveryStatus = z
  .enum(DELIVERY_STATUSES, { error: 'must be pending, succeeded or failed' })
  .meta({ id: 'WebhookDeliveryStatus', description: 'pending until an attempt succeeds (succeeded) or the last one fails (failed).' });

/** What an endpoint subscribes to: an event type, or "*" for all. */
const EventTypeFilter = z
  .enum(['*', ...EVENT_TYPES] as [string, ...string[]], { error: `must be an event type (${EVENT_TYPES.join(', ')}) or "*"` })
  .meta({ id: 'WebhookEventType', description: 'An event type (<object>.created, .updated or .deleted), or "*" for every type.' });

const eventTypeList = z
  .array(EventTypeFilter)
  .min(1, 'must list at least one event type')
  .max(100, 'must list at most 100 event types')
  .transform((types) => [...new Set(types)]);

// "*" alone is taken as ["*"] (DECISIONS §9.2: "a non-empty array of event types or "*" for all"); stored and answered as the list.
const eventTypes = z
  .preprocess((value) => (value === '*' ? ['*'] : value), eventTypeList)
  .describe('The event types delivered to this endpoint (e.g. invoice.updated): a list, or "*" (the same as ["*"]) for all.')
  .meta({ example: ['invoice.created', 'invoice.updated', 'payment.created'] });

const fields = {
  url: webhookUrl,
  description: z.string().max(1000, 'must be at most 1000 characters').nullable().optional().describe('Free text.').meta({ example: 'Accounting sync' }),
  events: eventTypes,
  enabled: z.boolean().optional().describe('Default true. A disabled endpoint gets no deliveries; its pending ones fail.').meta({ example: true }),
};

export const CreateWebhookEndpointBody = z.strictObject(fields).meta({ id: 'CreateWebhookEndpointBody' });
export type CreateWebhookEndpointBody = z.infer<typeof CreateWebhookEndpointBody>;

export const UpdateWebhookEndpointBody = z.strictObject(fields).partial().meta({ id: 'UpdateWebhookEndpointBody' });
export type UpdateWebhookEndpointBody = z.infer<typeof UpdateWebhookEndpointBody>;

export const ListWebhookEndpointsQuery = z.strictObject(listQueryShape);
export type ListWebhookEndpointsQuery = z.infer<typeof ListWebhookEndpointsQuery>;

const endpointShape = {
  uuid: z.string().meta({ format: 'uuid' }),
  url: z.string(),
  description: nullableString,
  events: z.array(z.string()),
  enabled: z.boolean(),
  created_at: timestampOutput,
  updated_at: timestampOutput,
  deleted_at: timestampOutput.nullable(),
};

export const WebhookEndpointResponse = z.object(endpointShape).meta({ id: 'WebhookEndpoint' });
export type WebhookEndpointResponse = z.infer<typeof WebhookEndpointResponse>;

/** The create answer: the record plus its signing secret, shown this once. */
export const CreatedWebhookEndpoint = z
  .object({
    ...endpointShape,
    secret: z
      .string()
      .describe('The signing secret, `whsec_` + base64 of 32 random bytes. Shown only in this answer.')
      .meta({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
  })
  .meta({ id: 'CreatedWebhookEndpoint' });

export const DeliveryResponse = z
  .object({
    uuid: z.string().meta({ format: 'uuid' }),
    event_uuid: z.string().meta({ format: 'uuid' }),
    event_type: z.string().meta({ example: 'invoice.updated' }),
    status: DeliveryStatus,
    attempts: z.number().int().describe('Attempts started so far.'),
    last_attempt_at: timestampOutput.nullable(),
    next_attempt_at: timestampOutput.nullable().describe('When the next attempt is due; null once the delivery is done.'),
    last_response_status: z.number().int().nullable().describe("The receiver's HTTP status of the last attempt, if it answered."),
    last_response_body: nullableString.describe(
      "The first 1 KiB of the receiver's answer to the last attempt, as text, if it answered (an attempt reads at most 64 KiB).",
    ),
    last_error: nullableString.describe('Why the last attempt failed, if it did.'),
    created_at: timestampOutput,
    updated_at: timestampOutput,
  })
  .meta({ id: 'WebhookDelivery' });
export type DeliveryResponse = z.infer<typeof DeliveryResponse>;

export const ListDeliveriesQuery = z.strictObject({
  ...listQueryShape,
  include_deleted: listQueryShape.include_deleted.describe("Also list a soft-deleted endpoint's deliveries."),
  status: DeliveryStatus.optional().describe('Only deliveries in this status.'),
});
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;

export const DeliveryParams = z.strictObject({
  uuid: uuidString.describe('The webhook endpoint id.'),
  delivery_uuid: uuidString.describe('The delivery id.'),
});
