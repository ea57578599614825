/** The event types of DECISIONS §9.1: `<object>.created|updated|deleted` for every recorded object. */
export const EVENT_OBJECTS = ['location', 'customer', 'job', 'job_photo', 'template', 'estimate', 'invoice', 'payment'] as const;
export const EVENT_ACTIONS = ['created', 'updated', 'deleted'] as const;
export const EVENT_TYPES = EVENT_OBJECTS.flatMap((object) => EVENT_ACTIONS.map((action) => `${object}.${action}`));

/** The columns of an events row the JSON is made of; `dataJson` is the stored `data` as its JSON text. */
export interface EventRowFields {
  uuid: string;
  type: string;
  objectType: string;
  objectUuid: string;
  dataJson: string;
  createdAt: Date | string;
}

/**
 * An event as the API shows it, as JSON text: in the feed, in GET /events/{uuid} and as a webhook
 * delivery's body. The stored `data` ({object, previous_attributes?}, written as the record's GET JSON)
 * is placed as stored: a feed page never parses and re-serializes its records.
 */
export function toEventJson(row: EventRowFields): string {
  const head = JSON.stringify({
    uuid: row.uuid,
    type: row.type,
    object_type: row.objectType,
    object_uuid: row.objectUuid,
    created_at: (row.createdAt instanceof Date ? row.createdAt : new Date(row.createdAt)).toISOString(),
  });
  return `${head.slice(0, -1)},"data":${row.dataJson}}`;
}
