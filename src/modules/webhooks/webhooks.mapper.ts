import type { DeliveryRow, EndpointRow } from './webhooks.repository.js';
import type { DeliveryResponse, WebhookEndpointResponse } from './webhooks.schemas.js';

/** An endpoint as the API answers it: never its secret (shown once, on creation). */
export function toEndpointResponse(row: EndpointRow): WebhookEndpointResponse {
  return {
    uuid: row.uuid,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    deleted_at: row.deletedAt?.toISOString() ?? null,
  };
}

/** A delivery as the API answers it: the worker's lease is internal. */
export function toDeliveryResponse(row: DeliveryRow): DeliveryResponse {
  return {
    uuid: row.uuid,
    event_uuid: row.eventUuid,
    event_type: row.eventType,
    status: row.status,
    attempts: row.attempts,
    last_attempt_at: row.lastAttemptAt?.toISOString() ?? null,
    next_attempt_at: row.nextAttemptAt?.toISOString() ?? null,
    last_response_status: row.lastResponseStatus,
    last_response_body: row.lastResponseBody,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
