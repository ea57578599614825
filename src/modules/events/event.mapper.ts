/** The event types of DECISIONS §9.1: `<object>.created|updated|deleted` for every recorded object. */
export const EVENT_OBJECTS = ['location', 'customer', 'job', 'job_photo', 'template', 'estimate', 'invoice', 'payment'] as const;
export const EVENT_ACTIONS = ['created', 'updated', 'deleted'] as const;
export const EVENT_TYPES = EVENT_OBJECTS.flatMap((object) => EVENT_ACTIONS.map((action) => `${object}.${action}`));

/** The columns of an events row the JSON is made of. */
export interface EventRowFields {
  uuid: string;
  type: string;
  objectType: string;
  objectUuid: string;
  data: unknown;
  createdAt: Date | string;
}

/** An event as the API shows it: in the feed, in GET /events/{uuid} and as a webhook delivery's body. */
export interface EventJson {
  uuid: string;
  type: string;
  object_type: string;
  object_uuid: string;
  created_at: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

/** An events row to its JSON; the stored `data` already holds {object, previous_attributes?}. */
export function toEventJson(row: EventRowFields): EventJson {
  return {
    uuid: row.uuid,
    type: row.type,
    object_type: row.objectType,
    object_uuid: row.objectUuid,
    created_at: (row.createdAt instanceof Date ? row.createdAt : new Date(row.createdAt)).toISOString(),
    data: row.data as EventJson['data'],
  };
}
