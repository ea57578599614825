import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { actorOf } from '../../auth/principal.js';
import { crudRoutes, UuidParams } from '../../shared/crud-routes.js';
import { SECURITY } from '../../shared/openapi.js';
import { errorResponses, listSchema, ok, okSchema } from '../../shared/envelope.js';
import { systemResolveHost } from './address-safety.js';
import { createWebhookEndpointsService, listDeliveries, retryDelivery } from './webhooks.service.js';
import {
  CreatedWebhookEndpoint,
  CreateWebhookEndpointBody,
  DeliveryParams,
  DeliveryResponse,
  ListDeliveriesQuery,
  ListWebhookEndpointsQuery,
  UpdateWebhookEndpointBody,
  WebhookEndpointResponse,
} from './webhooks.schemas.js';

const TAG = 'Webhooks';

export const WEBHOOK_DELIVERY_DESCRIPTION = `
Every event of a subscribed type is POSTed to the endpoint's url as JSON: the event exactly as
GET /api/v1/events/{uuid} gives it in \`data\` ({uuid, type, object_type, object_uuid, created_at,
data: {object, previous_attributes?}}). The request carries the Standard Webhooks headers:

- \`webhook-id\`: the event uuid, the same on every attempt (use it to drop duplicates);
- \`webhook-timestamp\`: Unix seconds of the attempt;
- \`webhook-signature\`: \`v1,\` + base64 of HMAC-SHA256 over \`<webhook-id>.<webhook-timestamp>.<body>\`, keyed with the
  bytes of the secret after \`whsec_\`, base64-decoded;
- \`content-type: application/json\`.

Verify with any Standard Webhooks library, e.g. npm \`standardwebhooks\`:
\`new Webhook(secret).verify(rawBody, headers)\`. A 2xx answer within WEBHOOK_TIMEOUT_MS (default 10 s) succeeds;
anything else (another status, a redirect, which is not followed, a timeout, a refused connection) is retried after
WEBHOOK_RETRY_DELAYS (default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), then the delivery is \`failed\`.
Delivery is at least once; order is not promised. A url whose host is or resolves to a loopback, private, shared,
link-local, multicast or unspecified address is 400 on create and update; every attempt resolves the host again and
fails unless it resolves to public addresses only (a name that does not resolve yet is accepted on create).
`.trim();

export const webhookRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const { config } = app.deps;
  const policy = {
    allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    resolveHost: app.deps.resolveHost ?? systemResolveHost,
  };
  const db = () => app.deps.database.db;

  const crud = crudRoutes(app, {
    scope: 'webhook_endpoints',
    tag: TAG,
    noun: 'Webhook endpoint',
    plural: 'webhook_endpoints',
    listItem: WebhookEndpointResponse,
    record: WebhookEndpointResponse,
    createdRecord: CreatedWebhookEndpoint,
    createBody: CreateWebhookEndpointBody,
    updateBody: UpdateWebhookEndpointBody,
    listQuery: ListWebhookEndpointsQuery,
    service: createWebhookEndpointsService(policy),
    descriptions: {
      create: `At most 20 live endpoints per company. The answer carries \`secret\`, shown only this once.\n\n${WEBHOOK_DELIVERY_DESCRIPTION}`,
      update: 'Partial update: absent fields are unchanged, null clears description. Disabling the endpoint ends its pending deliveries as failed.',
      remove: 'Sets deleted_at; no further deliveries, and the pending ones end as failed.',
    },
  });
  app.get('/webhook_endpoints', crud.list('listWebhookEndpoints'));
  app.get('/webhook_endpoints/:uuid', crud.get('getWebhookEndpoint'));
  app.post('/webhook_endpoints', crud.create('createWebhookEndpoint'));
  app.put('/webhook_endpoints/:uuid', crud.update('updateWebhookEndpoint'));
  app.patch('/webhook_endpoints/:uuid', crud.patch('patchWebhookEndpoint'));
  app.delete('/webhook_endpoints/:uuid', crud.remove('deleteWebhookEndpoint'));

  app.get(
    '/webhook_endpoints/:uuid/deliveries',
    {
      config: { scope: 'webhook_endpoints:read' },
      schema: {
        tags: [TAG],
        operationId: 'listWebhookDeliveries',
        summary: "List an endpoint's deliveries",
        description: 'Newest first. `next_attempt_at` is null once a delivery is done (succeeded or failed).',
        security: SECURITY,
        params: UuidParams,
        querystring: ListDeliveriesQuery,
        response: { 200: listSchema('deliveries', DeliveryResponse), ...errorResponses(404) },
      },
    },
    async (request) => {
      const page = await listDeliveries(db(), request.principal.companyId, request.params.uuid, request.query);
      return ok({ deliveries: page.items, pagination: page.pagination });
    },
  );

  app.post(
    '/webhook_endpoints/:uuid/deliveries/:delivery_uuid/retry',
    {
      config: { scope: 'webhook_endpoints:write', idempotency: 'atomic' },
      schema: {
        tags: [TAG],
        operationId: 'retryWebhookDelivery',
        summary: 'Retry a delivery now',
        description: 'Schedules an attempt now, also for a failed delivery, and answers the delivery.',
        security: SECURITY,
        params: DeliveryParams,
        response: { 200: okSchema(DeliveryResponse), ...errorResponses(404, 409) },
      },
    },
    async (request) =>
      ok(await retryDelivery(db(), actorOf(request), request.params.uuid, request.params.delivery_uuid)),
  );
};
