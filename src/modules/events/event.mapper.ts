import { sql, type SQL, type SQLChunk } from 'drizzle-orm';

/** The columns of an events row the event JSON is made of, as SQL (a table's columns or an alias's). */
export type EventColumnsSql = Record<'uuid' | 'type' | 'objectType' | 'objectUuid' | 'createdAt' | 'data', SQLChunk>;

/**
 * An event as the API shows it, made by PostgreSQL as JSON text: in the feed, in GET /events/{uuid} and
 * as a webhook delivery's body. It is the same text JSON.stringify gives for {uuid, type, object_type,
 * object_uuid, created_at, data}: ids, types and the millisecond UTC timestamp need no escaping, and the
 * stored `data` ({object, previous_attributes?}, written as the record's GET JSON) is placed as stored.
 * Built in SQL so a feed page arrives as one string: Node never parses and re-serializes its records.
 */
export function eventJsonSql(columns: EventColumnsSql): SQL<string> {
  return sql<string>`('{"uuid":"' || ${columns.uuid} || '","type":"' || ${columns.type}
    || '","object_type":"' || ${columns.objectType} || '","object_uuid":"' || ${columns.objectUuid}
    || '","created_at":"' || to_char(${columns.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    || '","data":' || ${columns.data}::text || '}')`;
}
