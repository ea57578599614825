import { getTableColumns, getTableName, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { events, MAX_LIVE_ENDPOINTS, webhookDeliveries } from '../../db/schema/index.js';
import { randomTimeOrderedId, uuidRun } from '../../shared/ids.js';
import { executePrepared, prepared } from '../../db/perf/prepared.js';
import { SharedFlush } from '../../db/perf/shared-flush.js';
import type { KeyCompletion } from '../../shared/keyed-writes.js';
import type { RowColumn } from '../../shared/record-rows.js';
import { byUuidPlaceholders, type TenantTable } from '../../shared/tenant-table.js';

/* The write side of change data: the events of a change and their webhook deliveries (the feed reads them in events/). */

/** Event batches of up to this many events are written by prepared statements. */
const PREPARED_BATCH_SIZES = 4;

export interface NewEvent {
  companyId: string;
  uuid: string;
  type: string;
  objectType: string;
  objectUuid: string;
  data: unknown;
}

/**
 * Writes an event and, in the same statement, one pending delivery for every enabled, live webhook
 * endpoint of the company that subscribes to its type (DECISIONS §9.2). Runs inside the transaction of
 * the change, so the event, its deliveries and the change commit or roll back together.
 */
export async function insertEventWithDeliveries(db: Db, event: NewEvent, newDeliveryUuid: () => string): Promise<void> {
  await insertEventsWithDeliveries(db, [event], newDeliveryUuid);
}

/** The columns an event is written with, and one event's values for them (given, or placeholders). */
const EVENT_FIELDS = ['companyId', 'uuid', 'type', 'objectType', 'objectUuid', 'data'] as const;
type EventValues = Record<(typeof EVENT_FIELDS)[number], unknown>;

/**
 * A write records one to a few events: batches up to PREPARED_BATCH_SIZES are prepared statements, with
 * placeholders `<field><index>` for each event of the batch; larger ones are built.
 */
function placeholdersOf(size: number): EventValues[] {
  return Array.from(
    { length: size },
    (_, index) => Object.fromEntries(EVENT_FIELDS.map((field) => [field, sql.placeholder(`${field}${index}`)])) as EventValues,
  );
}

/** The parameters that fill placeholdersOf(batch.length). */
function paramsOf(batch: readonly EventValues[]): Record<string, unknown> {
  return Object.fromEntries(batch.flatMap((event, index) => EVENT_FIELDS.map((field) => [`${field}${index}`, event[field]])));
}

/** An event for a statement written as raw SQL, which encodes the json column itself: `data` as its text. */
function withJsonText(event: NewEvent): EventValues {
  return { ...event, data: JSON.stringify(event.data) };
}

/** paramsOf for statements written as raw SQL. */
function jsonParamsOf(batch: readonly NewEvent[]): Record<string, unknown> {
  return paramsOf(batch.map(withJsonText));
}

/**
 * Companies whose last recorded events had subscribed endpoints. Their next events and deliveries are
 * written by one statement (insertEventsAndDeliveries) instead of two. This only chooses the statement:
 * both paths find the endpoints in the same transaction, so a stale entry costs a few ids, never a delivery.
 */
const companiesWithEndpoints = new Set<string>();
const COMPANIES_WITH_ENDPOINTS_KEPT = 10_000;

function rememberEndpoints(companyId: string, present: boolean): void {
  if (!present) {
    companiesWithEndpoints.delete(companyId);
    return;
  }
  // Kept in order of last write, so beyond the bound the company written to longest ago goes first.
  companiesWithEndpoints.delete(companyId);
  if (companiesWithEndpoints.size >= COMPANIES_WITH_ENDPOINTS_KEPT) companiesWithEndpoints.delete(companiesWithEndpoints.values().next().value!);
  companiesWithEndpoints.add(companyId);
}

/**
 * insertEventWithDeliveries for several events of one transaction (one company's: a write records its own
 * company's changes). The events keep the given order, which their seq follows. For a company last seen
 * with subscribed endpoints, one statement writes the events and their deliveries; otherwise the events'
 * statement answers the subscribed endpoints, and their deliveries follow in a second statement only when
 * there are any (most companies have none). Both run in the caller's transaction.
 */
export async function insertEventsWithDeliveries(db: Db, batch: readonly NewEvent[], newDeliveryUuid: () => string): Promise<void> {
  if (batch.length === 0) return;
  const companyId = batch[0].companyId;
  if (companiesWithEndpoints.has(companyId)) {
    rememberEndpoints(companyId, (await insertEventsAndDeliveries(db, batch, newDeliveryUuid)) > 0);
    return;
  }
  const build = (rows: readonly EventValues[]) =>
    db.insert(events).values(rows as Array<typeof events.$inferInsert>).returning({
      companyId: events.companyId,
      uuid: events.uuid,
      type: events.type,
      endpoints: sql<string | null>`(select string_agg(endpoint.uuid::text, ',') from webhook_endpoints endpoint
        where ${subscribes('endpoint', 'events')})`,
    });
  type Inserted = Awaited<ReturnType<typeof build>>;
  const inserted: Inserted =
    batch.length <= PREPARED_BATCH_SIZES
      ? ((await prepared(db, `insert_events_${batch.length}`, () => build(placeholdersOf(batch.length))).execute(paramsOf(batch))) as Inserted)
      : await build(batch);
  const deliveries = inserted.flatMap((event) =>
    (event.endpoints ? event.endpoints.split(',') : []).map((endpointUuid) => ({
      companyId: event.companyId,
      // Made here so they are UUIDv7 like every other id.
      uuid: newDeliveryUuid(),
      endpointUuid,
      eventUuid: event.uuid,
      eventType: event.type,
    })),
  );
  if (deliveries.length > 0) {
    await db.insert(webhookDeliveries).values(deliveries);
    rememberEndpoints(companyId, true);
  }
}

/** Endpoint `endpoint` is live, enabled and subscribes to the type of event `event` (DECISIONS §9.2); both are aliases. */
function subscribes(endpoint: string, event: string): SQL {
  const [e, v] = [sql.raw(endpoint), sql.raw(event)];
  return sql`${e}.company_id = ${v}.company_id and ${e}.deleted_at is null and ${e}.enabled
    and (${v}.type = any(${e}.events) or '*' = any(${e}.events))`;
}

/**
 * The events and their deliveries in one statement; answers how many deliveries it wrote. Delivery ids
 * come from the service like every id: enough UUIDv7s for the most endpoints a company may have are sent
 * along and taken in order. Should a company ever have more (two endpoint creates racing past the limit),
 * the rest get random ids rather than no delivery.
 */
async function insertEventsAndDeliveries(db: Db, batch: readonly NewEvent[], newDeliveryUuid: () => string): Promise<number> {
  const ids = uuidRun(newDeliveryUuid(), batch.length * MAX_LIVE_ENDPOINTS);
  const statement = (rows: SQL, idsParam: SQL) => sql`with ${eventsWithDeliveries(sql`values ${rows}`, idsParam)}
    select count(*)::int as made from made`;
  // Raw SQL: the json column's encoding is done here, as the query builder does it for the other path.
  const row = (event: EventValues) =>
    sql`(${event.companyId}::uuid, ${event.uuid}::uuid, ${event.type}, ${event.objectType}, ${event.objectUuid}::uuid, ${event.data}::json)`;
  const valuesList = (list: readonly EventValues[]) => sql.join(list.map(row), sql`, `);
  let result: { made: number } | undefined;
  if (batch.length <= PREPARED_BATCH_SIZES) {
    [result] = await executePrepared<{ made: number }>(
      db,
      `insert_events_deliveries_${batch.length}`,
      () => statement(valuesList(placeholdersOf(batch.length)), sql`${sql.placeholder('ids')}`),
      { ...jsonParamsOf(batch), ids },
    );
  } else {
    const built = await db.execute(statement(valuesList(batch.map(withJsonText)), sql`${sql.param(ids)}`));
    [result] = (built as unknown as { rows: Array<{ made: number }> }).rows;
  }
  return result?.made ?? 0;
}


/**
 * The CTEs `event`, `targets` and `made` of a write that records its events in its own statement: the events
 * that `rows` yields (a VALUES list or a SELECT of company_id, uuid, type, object_type, object_uuid, data, in
 * the order their seq follows) and a delivery per event and subscribed endpoint, with the service's ids.
 */
function eventsWithDeliveries(rows: SQL, ids: SQL): SQL {
  return sql`event as (
        insert into ${events} (company_id, uuid, type, object_type, object_uuid, data) ${rows}
        returning company_id, uuid, type, seq
      ), targets as (
        select event.company_id, event.uuid, event.type, endpoint.uuid as endpoint_uuid,
          row_number() over (order by event.seq, endpoint.uuid) as n
        from event join webhook_endpoints endpoint on ${subscribes('endpoint', 'event')}
      ), made as (
        insert into ${webhookDeliveries} (company_id, uuid, endpoint_uuid, event_uuid, event_type)
        select company_id, coalesce((${ids}::uuid[])[n], gen_random_uuid()), endpoint_uuid, uuid, type from targets
        returning 1
      )`;
}

/**
 * A value a one-statement write learns only as it runs (an amount settled under a row's lock), written into its
 * JSON texts (its events, a key's answer) where the service put `mark`: a string of the service's making that no
 * client could have sent (newMark). The JSON string `"<mark>"` is replaced by the text of `value`, a scalar SQL
 * expression over the statement's CTEs giving a JSON number or string.
 */
export interface JsonMark {
  mark: string;
  value: SQL;
}

/** A mark for `value`: a label to read it by and a random part no client can know when it sends its body. */
export function newMark(label: string, value: SQL): JsonMark {
  return { mark: `mark:${label}:${randomTimeOrderedId()}`, value };
}

/** The text of a JSON value filled in at each mark, by the mark. */
export type MarkValues = Readonly<Record<string, string>>;

/** The JSON text `text` (an SQL text) with the JSON string of each mark (placeholder `mark<i>`) replaced by its value. */
function fillMarksSql(text: SQL, marks: readonly JsonMark[]): SQL {
  return marks.reduce<SQL>((filled, { value }, index) => sql`replace(${filled}, ${sql.placeholder(`mark${index}`)}::text, (${value})::text)`, text);
}

/** The placeholders of fillMarksSql. */
function markParams(marks: readonly JsonMark[]): Record<string, string> {
  return Object.fromEntries(marks.map(({ mark }, index) => [`mark${index}`, JSON.stringify(mark)]));
}

/** The JSON text `text` with the JSON string of each mark replaced by the value the statement gave it. */
export function fillMarks(text: string, values: MarkValues): string {
  let filled = text;
  for (const [mark, value] of Object.entries(values)) filled = filled.split(JSON.stringify(mark)).join(value);
  return filled;
}

/**
 * The events of a one-statement write as a SELECT for eventsWithDeliveries: `count` events from placeholders
 * (placeholdersOf, filled by jsonParamsOf), in their order, written only when `written` (an SQL condition over the write's own CTEs)
 * holds, their JSON texts with `marks` filled in.
 */
function eventSelect(count: number, written: SQL, marks: readonly JsonMark[]): SQL {
  const rows = placeholdersOf(count).map(
    (event, index) => sql`(${sql.raw(String(index))}, ${event.companyId}::uuid, ${event.uuid}::uuid, ${event.type}::text, ${event.objectType}::text,
      ${event.objectUuid}::uuid, ${fillMarksSql(sql`${event.data}::text`, marks)})`,
  );
  return sql`select listed.company_id, listed.uuid, listed.type, listed.object_type, listed.object_uuid, listed.data::json
    from (values ${sql.join(rows, sql`, `)}) as listed(n, company_id, uuid, type, object_type, object_uuid, data)
    where ${written} order by listed.n`;
}

/**
 * What a create writes or checks besides its row, in the same statement: CTEs before the insert (locks,
 * checks), which must yield one row (`source`, a `from ...` clause over them) for the row to be inserted,
 * and CTEs after it that may read `inserted` (rows of other tables written with it). Values are
 * placeholders, filled from `params`; `name` names the statement's shape. `events` are recorded after the
 * created one (changes the create makes to other records), and `marks` fill in the JSON of every event and of
 * the key's answer what the statement learns as it runs.
 */
export interface CreateGuard {
  name: string;
  before: SQL;
  source: SQL;
  after?: SQL;
  /** What `inserted` answers (its RETURNING list) for the CTEs after it and the marks; 1 when not given. */
  returning?: SQL;
  params: Record<string, unknown>;
  events?: readonly NewEvent[];
  marks?: readonly JsonMark[];
  /**
   * The statement holds a row that other writes queue on (the company's document counter, an invoice being
   * settled): its commit releases the row without waiting for the disk, and the write waits for the disk
   * afterwards (awaitFlush), before anyone is answered. See docs/numbering.md.
   */
  flushAfterCommit?: boolean;
}

/** One shared flush per database handle (see SharedFlush). */
const flushes = new WeakMap<Db, SharedFlush>();

/**
 * Waits until every commit made so far is on disk: a transaction with an id commits synchronously, and the
 * write-ahead log is flushed in order, so earlier commits, asynchronous ones included, are flushed with it.
 * Concurrent waiters share flushes.
 */
async function awaitFlush(db: Db): Promise<void> {
  let shared = flushes.get(db);
  if (!shared) {
    shared = new SharedFlush(() => executePrepared(db, 'await_flush', () => sql`select pg_current_xact_id()::text as flushed_with`, {}));
    flushes.set(db, shared);
  }
  try {
    await shared.wait();
  } catch {
    // The write is committed: one failed flush (a connection cut) must not answer an error that a client
    // would retry into a second record. A second failure does answer 500.
    await shared.wait();
  }
}

/**
 * A create in one statement (one round trip, no BEGIN or COMMIT): the record's row, its created event (and a
 * guard's further events), the events' deliveries to the company's subscribed endpoints and, for a keyed
 * request, the key's completion, as data-modifying CTEs of one INSERT, which commits or fails whole. The
 * events' JSON is built by the service (the record's mapper over the row it writes), so nothing is read back.
 * Prepared once per table and shape (keyed or not, guarded or not): every column is always written. With a
 * guard, the row and all that goes with it are written only when the guard's checks pass. Answers null when
 * nothing was written, else the values of the guard's marks (none without marks).
 */
export async function insertRecordWithEvent(
  db: Db,
  tableName: string,
  columns: readonly RowColumn[],
  event: NewEvent,
  key: KeyCompletion | null,
  newDeliveryUuid: () => string,
  guard?: CreateGuard,
): Promise<MarkValues | null> {
  const recorded = [event, ...(guard?.events ?? [])];
  const marks = guard?.marks ?? [];
  const ids = uuidRun(newDeliveryUuid(), recorded.length * MAX_LIVE_ENDPOINTS);
  // The shape: the guard, how many events (a guard's further events may be none) and marks, whether keyed.
  const name = `create_${tableName}${guard ? `_${guard.name}_${recorded.length}_${marks.length}${guard.flushAfterCommit ? '_flushed_after' : ''}` : ''}${key ? '_keyed' : ''}`;
  const build = () => {
    const list = sql.join(columns.map((column) => sql.identifier(column.name)), sql`, `);
    const values = sql.join(columns.map((column) => sql`${sql.placeholder(`c_${column.name}`)}::${sql.raw(column.sqlType)}`), sql`, `);
    const keyed = key
      ? sql`, completed as (
          insert into idempotency_keys (company_id, key, fingerprint, state, response_status, response_body, record_uuid)
          select ${sql.placeholder('keyCompany')}::uuid, ${sql.placeholder('key')}, ${sql.placeholder('fingerprint')}, 'completed',
            ${sql.placeholder('status')}::int, ${fillMarksSql(sql`${sql.placeholder('body')}::text`, marks)}, ${sql.placeholder('recordUuid')}::uuid
          from inserted
        )`
      : sql``;
    const row = guard ? sql`select ${values} ${guard.source}` : sql`values (${values})`;
    const markValues = marks.map(({ value }, index) => sql`, (${value})::text as ${sql.identifier(`mark${index}`)}`);
    return sql`with ${guard ? sql`${guard.before}, ` : sql``}inserted as (
        insert into ${sql.identifier(tableName)} (${list}) ${row} returning ${guard?.returning ?? sql`1`}
      ), ${guard?.after ? sql`${guard.after}, ` : sql``}${eventsWithDeliveries(
        eventSelect(recorded.length, sql`exists (select 1 from inserted)`, marks),
        sql`${sql.placeholder('ids')}`,
      )}${keyed}
      select (select count(*) from inserted)::int as inserted${sql.join(markValues)}${guard?.flushAfterCommit ? sql`, set_config('synchronous_commit', 'off', true) as flush_after_commit` : sql``}`;
  };
  const params: Record<string, unknown> = {
    ...Object.fromEntries(columns.map((column) => [`c_${column.name}`, column.value])),
    ...jsonParamsOf(recorded),
    ...markParams(marks),
    ids,
    ...(key ? { keyCompany: key.companyId, key: key.key, fingerprint: key.fingerprint, status: key.status, body: key.body, recordUuid: key.recordUuid } : {}),
    ...guard?.params,
  };
  const [result] = await executePrepared<Record<string, unknown> & { inserted: number }>(db, name, build, params);
  if (!result || result.inserted === 0) return null;
  if (guard?.flushAfterCommit) await awaitFlush(db);
  return Object.fromEntries(marks.map(({ mark }, index) => [mark, String(result[`mark${index}`])]));
}

/** A row and its version (xmin): any other write of the row gives it another. */
export type VersionedRow<Row> = Row & { version: string };

/** The company's live row with this uuid and its version, or null. */
export async function findVersionedRow<Row>(db: Db, table: TenantTable, companyId: string, uuid: string): Promise<VersionedRow<Row> | null> {
  const statement = prepared(db, `find_${getTableName(table)}_versioned`, () =>
    db
      .select({ ...getTableColumns(table), version: sql<string>`xmin::text` })
      .from(table)
      .where(byUuidPlaceholders(table, false))
      .limit(1),
  );
  const [row] = await statement.execute({ companyId, uuid });
  return (row as VersionedRow<Row> | undefined) ?? null;
}

/**
 * An update (or soft delete) in one statement, written only if the row is still the version read: every
 * column set to the new row's value, its event and the event's deliveries, as data-modifying CTEs of one
 * UPDATE. False when another write changed the row since it was read (nothing written). Prepared once per table.
 */
export async function updateRecordWithEvent(
  db: Db,
  tableName: string,
  columns: readonly RowColumn[],
  where: { companyId: string; uuid: string; version: string },
  event: NewEvent | null,
  newDeliveryUuid: () => string,
): Promise<boolean> {
  const ids = event ? uuidRun(newDeliveryUuid(), MAX_LIVE_ENDPOINTS) : [];
  const settable = columns.filter((column) => column.name !== 'company_id' && column.name !== 'uuid');
  const build = () => {
    const set = sql.join(
      settable.map((column) => sql`${sql.identifier(column.name)} = ${sql.placeholder(`c_${column.name}`)}::${sql.raw(column.sqlType)}`),
      sql`, `,
    );
    return sql`with updated as (
        update ${sql.identifier(tableName)} set ${set}
        where company_id = ${sql.placeholder('whereCompany')}::uuid and uuid = ${sql.placeholder('whereUuid')}::uuid
          and deleted_at is null and xmin = ${sql.placeholder('version')}::xid
        returning 1
      ), ${eventsWithDeliveries(eventSelect(1, sql`${sql.placeholder('recorded')}::boolean and exists (select 1 from updated)`, []), sql`${sql.placeholder('ids')}`)}
      select (select count(*) from updated)::int as updated, (select count(*) from made)::int as made`;
  };
  const params: Record<string, unknown> = {
    ...Object.fromEntries(settable.map((column) => [`c_${column.name}`, column.value])),
    whereCompany: where.companyId,
    whereUuid: where.uuid,
    version: where.version,
    recorded: event !== null,
    ...jsonParamsOf([event ?? { companyId: where.companyId, uuid: where.uuid, type: '', objectType: '', objectUuid: where.uuid, data: null }]),
    ids,
  };
  const [result] = await executePrepared<{ updated: number }>(db, `update_${tableName}_versioned`, build, params);
  return (result?.updated ?? 0) > 0;
}
