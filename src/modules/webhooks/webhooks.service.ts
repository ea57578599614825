import { completeKeyInTransaction, keyedWrite } from '../../shared/keyed-writes.js';
import { newRecordId } from '../../shared/ids.js';
import type { z } from 'zod';
import type { Db } from '../../db/client.js';
import { AppError, invalidField, notFound } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { assertIfMatch } from '../../shared/etag.js';
import type { Page } from '../../shared/list-query.js';
import { softDelete } from '../../shared/tenant-table.js';
import { MAX_LIVE_ENDPOINTS, webhookEndpoints } from '../../db/schema/index.js';
import { assertAllowedHost, UnsafeAddressError, type AddressPolicy } from './address-safety.js';
import { wakeDeliveryWorkers } from './delivery-worker.js';
import { newWebhookSecret } from './signature.js';
import { toDeliveryResponse, toEndpointResponse } from './webhooks.mapper.js';
import * as repository from './webhooks.repository.js';
import {
  type CreatedWebhookEndpoint,
  type CreateWebhookEndpointBody,
  type ListDeliveriesQuery,
  type ListWebhookEndpointsQuery,
  type UpdateWebhookEndpointBody,
  type WebhookEndpointResponse,
} from './webhooks.schemas.js';


/** The endpoint service for one address policy (WEBHOOK_ALLOW_PRIVATE_NETWORKS and the resolver). */
export function createWebhookEndpointsService(policy: AddressPolicy) {
  /** A url's host may not be or resolve to a refused address (checked again at every attempt). */
  async function assertSafeUrl(url: string): Promise<void> {
    try {
      await assertAllowedHost(new URL(url), policy);
    } catch (error) {
      if (error instanceof UnsafeAddressError) throw invalidField('url', error.message);
      throw error;
    }
  }

  const endpoints: CrudService<
    WebhookEndpointResponse,
    WebhookEndpointResponse,
    CreateWebhookEndpointBody,
    UpdateWebhookEndpointBody,
    ListWebhookEndpointsQuery,
    z.infer<typeof CreatedWebhookEndpoint>
  > = {
    async list(db: Db, companyId: string, query: ListWebhookEndpointsQuery): Promise<Page<WebhookEndpointResponse>> {
      const page = await repository.listEndpoints(db, companyId, query);
      return { items: page.items.map(toEndpointResponse), pagination: page.pagination };
    },

    async get(db: Db, companyId: string, uuid: string, includeDeleted: boolean) {
      const row = await repository.findEndpoint(db, companyId, uuid, { includeDeleted });
      if (!row) throw notFound('Webhook endpoint');
      return toEndpointResponse(row);
    },

    /** Answers the record with its secret: the only time the secret is shown. */
    async create(db: Db, actor: Actor, body: CreateWebhookEndpointBody) {
      await assertSafeUrl(body.url);
      const secret = newWebhookSecret();
      // A keyed create completes its Idempotency-Key in the same transaction (shared/keyed-writes.ts).
      return keyedWrite(actor, () => db.transaction(async (tx) => {
        await repository.lockCompanyEndpoints(tx, actor.companyId);
        if ((await repository.countLiveEndpoints(tx, actor.companyId)) >= MAX_LIVE_ENDPOINTS) {
          throw new AppError(
            'validation_error',
            `A company may have at most ${MAX_LIVE_ENDPOINTS} webhook endpoints; delete one before adding another.`,
          );
        }
        const row = await repository.insertEndpoint(tx, {
          companyId: actor.companyId,
          uuid: newRecordId(),
          url: body.url,
          description: body.description ?? null,
          events: body.events,
          enabled: body.enabled ?? true,
          secret,
        });
        const created = { ...toEndpointResponse(row), secret };
        await completeKeyInTransaction(tx, actor, created, row.uuid);
        return created;
      }));
    },

    async update(db: Db, actor: Actor, uuid: string, body: UpdateWebhookEndpointBody) {
      if (body.url !== undefined) await assertSafeUrl(body.url);
      const row = await db.transaction(async (tx) => {
        const current = await repository.findEndpoint(tx, actor.companyId, uuid, { lock: true });
        if (!current) throw notFound('Webhook endpoint');
        assertIfMatch(actor.ifMatch, toEndpointResponse(current));
        const values: Partial<repository.EndpointInsert> = {};
        if (body.url !== undefined) values.url = body.url;
        if (body.description !== undefined) values.description = body.description;
        if (body.events !== undefined) values.events = body.events;
        if (body.enabled !== undefined) values.enabled = body.enabled;
        const updated = await repository.updateEndpoint(tx, actor.companyId, uuid, values);
        if (!updated) throw notFound('Webhook endpoint');
        if (!updated.enabled) await repository.failPendingDeliveries(tx, actor.companyId, uuid, 'The endpoint was disabled.');
        return updated;
      });
      return toEndpointResponse(row);
    },

    async remove(db: Db, actor: Actor, uuid: string) {
      await db.transaction(async (tx) => {
        const current = await repository.findEndpoint(tx, actor.companyId, uuid, { lock: true });
        if (!current) throw notFound('Webhook endpoint');
        assertIfMatch(actor.ifMatch, toEndpointResponse(current));
        await softDelete(tx, webhookEndpoints, actor.companyId, uuid);
        await repository.failPendingDeliveries(tx, actor.companyId, uuid, 'The endpoint was deleted.');
      });
    },
  };
  return endpoints;
}

/** The delivery log of one endpoint; another company's endpoint is 404. */
export async function listDeliveries(db: Db, companyId: string, endpointUuid: string, query: ListDeliveriesQuery) {
  if (!(await repository.findEndpoint(db, companyId, endpointUuid, { includeDeleted: query.include_deleted }))) {
    throw notFound('Webhook endpoint');
  }
  const page = await repository.listDeliveries(db, companyId, endpointUuid, query);
  return { items: page.items.map(toDeliveryResponse), pagination: page.pagination };
}

/**
 * Makes the delivery due now, also a failed one, and wakes this process's worker. A keyed request completes
 * its key in the same transaction.
 */
export async function retryDelivery(db: Db, actor: Actor, endpointUuid: string, deliveryUuid: string) {
  const { companyId } = actor;
  const delivery = await keyedWrite(actor, () =>
    db.transaction(async (tx) => {
      const endpoint = await repository.findEndpoint(tx, companyId, endpointUuid);
      if (!endpoint) throw notFound('Webhook endpoint');
      // A disabled endpoint gets no attempts (DECISIONS §9.2): a retry would answer one that never comes.
      if (!endpoint.enabled) {
        if (!(await repository.findDelivery(tx, companyId, endpointUuid, deliveryUuid))) throw notFound('Delivery');
        throw new AppError('validation_error', 'The webhook endpoint is disabled: enable it (enabled: true) before retrying its deliveries.');
      }
      const row = await repository.scheduleRetryNow(tx, companyId, endpointUuid, deliveryUuid);
      if (!row) throw notFound('Delivery');
      const answer = toDeliveryResponse(row);
      await completeKeyInTransaction(tx, actor, answer);
      return answer;
    }),
  );
  wakeDeliveryWorkers();
  return delivery;
}
