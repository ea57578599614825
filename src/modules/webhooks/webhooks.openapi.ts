import { EVENT_TYPES } from '../../db/schema/index.js';

const header = (description: string, example: string) => ({
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
});

/**
 * The OpenAPI 3.1 `webhooks` entry: the request this API sends to a webhook endpoint, with the Standard
 * Webhooks headers and how to verify them.
 */
export const WEBHOOKS_OPENAPI = {
  event: {
    post: {
      operationId: 'webhookEvent',
      tags: ['Webhooks'],
      summary: 'An event delivered to a webhook endpoint',
      description:
        'POSTed to the url of every enabled endpoint that subscribes to the event type. Verify the signature over the ' +
        'raw body before parsing it, e.g. with npm `standardwebhooks`: `new Webhook(secret).verify(rawBody, headers)`. ' +
        'The same event may arrive more than once (at-least-once delivery): use `webhook-id` to drop duplicates. ' +
        'Answer 2xx within WEBHOOK_TIMEOUT_MS (default 10 s); anything else is retried on WEBHOOK_RETRY_DELAYS.',
      // The receiver authenticates the request by its signature, not by an API key.
      security: [],
      parameters: [
        { name: 'webhook-id', ...header('The event uuid; the same on every attempt.', '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70') },
        { name: 'webhook-timestamp', ...header('Unix seconds of this attempt; reject old timestamps to stop replays.', '1763906709') },
        {
          name: 'webhook-signature',
          ...header(
            '`v1,` + base64 of HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the bytes of the ' +
              'endpoint secret after `whsec_`, base64-decoded. Compare in constant time.',
            'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
          ),
        },
      ],
      requestBody: {
        required: true,
        description: 'The event, exactly as GET /api/v1/events/{uuid} gives it in `data`.',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['uuid', 'type', 'object_type', 'object_uuid', 'created_at', 'data'],
              properties: {
                uuid: { type: 'string', format: 'uuid' },
                type: { type: 'string', enum: EVENT_TYPES, example: 'invoice.updated' },
                object_type: { type: 'string', example: 'invoice' },
                object_uuid: { type: 'string', format: 'uuid' },
                created_at: { type: 'string', format: 'date-time' },
                data: {
                  type: 'object',
                  required: ['object'],
                  properties: {
                    object: { type: 'object', additionalProperties: true, description: 'The record as its GET returns it.' },
                    previous_attributes: {
                      type: 'object',
                      additionalProperties: true,
                      description: 'On `.updated` only: the old value of each changed top-level field.',
                    },
                  },
                },
              },
            },
          },
        },
      },
      responses: {
        '200': { description: 'Any 2xx answer marks the delivery succeeded.' },
        '400': { description: 'Any other answer, a redirect, a timeout or a refused connection fails the attempt.' },
      },
    },
  },
};
