import { getTableName } from 'drizzle-orm';
import { randomTimeOrderedId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import type { EventType, ObjectType } from '../../db/schema/index.js';
import { notFound } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import { assertIfMatch } from '../../shared/etag.js';
import { insertKeyCompletion, keyCompletion, keyedWrite, markCompleted } from '../../shared/keyed-writes.js';
import { markRecording } from '../../shared/recorded-writes.js';
import { findRow, softDelete, updateRow, type TenantTable } from '../../shared/tenant-table.js';
import { changedRow, newRow, rowColumns } from '../../shared/record-rows.js';
import {
  findVersionedRow,
  insertEventsWithDeliveries,
  insertRecordWithEvent,
  updateRecordWithEvent,
  fillMarks,
  type CreateGuard,
  type MarkValues,
  type NewEvent,
} from './changes.repository.js';

/** What a loader may need besides the database: how to build photo links. */
export interface ChangeContext {
  photoLinks?: unknown;
}

/**
 * Each recorded object type's record, as its GET with include_deleted=true answers it. The recorder knows
 * no resource: each recorded module states its own record type here, beside its loader, with
 * `declare module '../changes/change-recorder.js' { interface RecordedObjects { customer: CustomerResponse } }`.
 */
export interface RecordedObjects extends Record<ObjectType, unknown> {}

/** The one untyped view of a record: field by field, for diffing and ETags. */
type ApiRecord = Record<string, unknown>;

/** How the recorder reads one object type; each recorded module exports its own. */
export interface RecordedType<T> {
  table: TenantTable;
  /** Noun of the 404 for a missing record. */
  noun: string;
  /** Top-level fields that are embedded objects: left out of previous_attributes. */
  embeds: ReadonlyArray<keyof T & string>;
  /** The record as its GET answers it (a soft-deleted one too when includeDeleted), or null. */
  find(db: Db, companyId: string, uuid: string, includeDeleted: boolean, context: ChangeContext): Promise<T | null>;
  /**
   * Locks the row (FOR UPDATE) and reads the record in one statement: the row and the record, or null
   * when there is none. Without it, the row is locked and the record read by two statements.
   */
  lockAndLoad?(db: Db, companyId: string, uuid: string, includeDeleted: boolean, context: ChangeContext): Promise<{ row: unknown; record: T } | null>;
  /**
   * The record from its row: the resource's mapper, the one definition of its JSON. A type that has it can
   * be created in one statement (createRecord), its event built from the row the service writes.
   */
  fromRow?(row: never): T;
}

/**
 * The loader of every recorded type: the registry the recorder is handed (src/modules/events/recorded-types.ts).
 * Mapped over the object types so that an index by a generic key keeps its type.
 */
export type RecordedTypes = { [K in ObjectType]: RecordedType<RecordedObjects[K]> };
type RecordsByUuid = { [K in ObjectType]: Map<string, RecordedObjects[K]> };

let registry: RecordedTypes | undefined;

/** Hands the recorder its registry; the app does it once, as it is built. */
export function useRecordedTypes(types: RecordedTypes): void {
  registry = types;
}

function definitionOf<K extends ObjectType>(type: K): RecordedType<RecordedObjects[K]> {
  if (!registry) throw new Error('The change recorder has no recorded types: buildApp hands them over (useRecordedTypes)');
  return registry[type];
}

/** A record as its GET answers it; 404 naming its type when there is none. */
export async function getRecord<T>(
  type: RecordedType<T>,
  db: Db,
  companyId: string,
  uuid: string,
  includeDeleted: boolean,
  context: ChangeContext = {},
): Promise<T> {
  const record = await type.find(db, companyId, uuid, includeDeleted, context);
  if (record === null) throw notFound(type.noun);
  return record;
}

interface Entry {
  type: ObjectType;
  uuid: string;
  kind: 'created' | 'target' | 'touched';
  /** Already recorded (complete() or flush()): the event's uuid, or null when it recorded none. */
  event?: string | null;
  before: ApiRecord | null;
  /** created() was given the record in its GET form: it is not read again. */
  given?: boolean;
}

/** The record a write answers with (see Changes.answer); recordChanges resolves to it. */
export class Answer<T> {
  constructor(
    private readonly key: string,
    private readonly read: () => T | undefined,
    /** The uuid of the record when this write created it. */
    readonly createdUuid: string | null = null,
  ) {}

  /** The record as read at the end of the transaction. */
  value(): T {
    const record = this.read();
    if (record === undefined) throw new Error(`The answer ${this.key} is not a record this write changed`);
    return record;
  }
}

/** The fields whose value changed, with their old values; updated_at and embedded objects left out. */
export function previousAttributes(before: ApiRecord, after: ApiRecord, embeds: readonly string[]): ApiRecord {
  const previous: ApiRecord = {};
  for (const [field, value] of Object.entries(before)) {
    if (field === 'updated_at' || embeds.includes(field)) continue;
    if (JSON.stringify(value) !== JSON.stringify(after[field])) previous[field] = value;
  }
  return previous;
}

/**
 * The changes of one write transaction. Records are remembered before they change (locked, so nothing
 * else changes them until commit) and read again at the end; each one that changed records its event.
 */
export class Changes {
  private readonly entries = new Map<string, Entry>();
  /** Every entry's record as given to created() or read at the end, typed by object type. */
  private readonly records: Partial<RecordsByUuid> = {};

  constructor(
    readonly tx: Db,
    readonly actor: Pick<Actor, 'companyId' | 'ifMatch'>,
    private readonly context: ChangeContext,
  ) {}

  get companyId(): string {
    return this.actor.companyId;
  }

  /**
   * The live record a PUT, PATCH or DELETE addresses: locked, read, and checked against If-Match under
   * the lock, so of two writes with the same If-Match only the first can pass. 404 when it is not live
   * or `belongs` refuses it. Returns the locked row.
   */
  async target<Row = Record<string, unknown>>(type: ObjectType, uuid: string, belongs?: (row: Row) => boolean): Promise<Row> {
    const definition = definitionOf(type);
    const locked = await this.lock(type, uuid, false);
    const row = locked?.row as Row | undefined;
    if (!locked || (belongs && !belongs(row as Row))) throw notFound(definition.noun);
    const key = `${type}:${uuid}`;
    const known = this.entries.get(key);
    if (known) {
      if (known.before) assertIfMatch(this.actor.ifMatch, known.before);
      known.kind = 'target';
      return row as Row;
    }
    const before = locked.record ?? (await this.load(type, uuid));
    assertIfMatch(this.actor.ifMatch, before);
    this.entries.set(key, { type, uuid, kind: 'target', before });
    return row as Row;
  }

  /** A record the write changes as a side effect: locked and read before the change; missing is ignored. */
  async touch(type: ObjectType, uuid: string | null | undefined): Promise<void> {
    if (!uuid) return;
    const key = `${type}:${uuid}`;
    if (this.entries.has(key)) return;
    const locked = await this.lock(type, uuid, true);
    if (!locked) return;
    const before = locked.record ?? (await this.load(type, uuid));
    this.entries.set(key, { type, uuid, kind: 'touched', before });
  }

  /** The record as it is now, soft-deleted or not. */
  private load<K extends ObjectType>(type: K, uuid: string): Promise<RecordedObjects[K]> {
    return getRecord(definitionOf(type), this.tx, this.companyId, uuid, true, this.context);
  }

  /** Locks a record's row; with the record too when its type reads both in one statement. */
  private async lock(type: ObjectType, uuid: string, includeDeleted: boolean): Promise<{ row: unknown; record?: ApiRecord } | null> {
    const definition = definitionOf(type);
    if (definition.lockAndLoad) {
      const found = await definition.lockAndLoad(this.tx, this.companyId, uuid, includeDeleted, this.context);
      return found && { row: found.row, record: found.record as unknown as ApiRecord };
    }
    const row = await findRow(this.tx, definition.table, this.companyId, uuid, { includeDeleted, lock: true });
    return row && { row };
  }

  /**
   * A record the write changes as a side effect, already locked and read by the caller (`before`, its GET
   * form): touch() without reading it again.
   */
  touched<K extends ObjectType>(type: K, uuid: string, before: RecordedObjects[K]): void {
    const key = `${type}:${uuid}`;
    if (!this.entries.has(key)) this.entries.set(key, { type, uuid, kind: 'touched', before: before as unknown as ApiRecord });
  }

  /** A record this write created; `record` is its GET form when the caller already has it. */
  created<K extends ObjectType>(type: K, uuid: string, record?: RecordedObjects[K]): void {
    this.entries.set(`${type}:${uuid}`, { type, uuid, kind: 'created', before: null, given: record !== undefined });
    if (record !== undefined) this.recordsOf(type).set(uuid, record);
  }

  /** A changed record's GET form after the change, when the caller has it: it is not read again. */
  after<K extends ObjectType>(type: K, uuid: string, record: RecordedObjects[K]): void {
    const entry = this.entries.get(`${type}:${uuid}`);
    if (!entry || entry.event !== undefined) return;
    entry.given = true;
    this.recordsOf(type).set(uuid, record);
  }

  /** Names the record recordChanges answers with, as read at the end of the transaction: return it from the write. */
  answer<K extends ObjectType>(type: K, uuid: string): Answer<RecordedObjects[K]> {
    const key = `${type}:${uuid}`;
    return new Answer(key, () => this.recordsOf(type).get(uuid), this.entries.get(key)?.kind === 'created' ? uuid : null);
  }

  /** An answer that is not one record (an upload's photos), given whole: return it from the write. */
  answerWith<T>(value: T): Answer<T> {
    return new Answer('value', () => value);
  }

  /**
   * Reads every remembered record again and records one event per changed record; primary records first.
   * recordChanges calls it before the commit.
   */
  async flush(): Promise<void> {
    const ordered = [...this.entries.values()]
      .filter((entry) => entry.event === undefined)
      .sort((a, b) => Number(a.kind === 'touched') - Number(b.kind === 'touched'));
    const batch: NewEvent[] = [];
    for (const entry of ordered) {
      const event = await this.eventFor(entry);
      entry.event = event?.uuid ?? null;
      if (event) batch.push(event);
    }
    await insertEventsWithDeliveries(this.tx, batch, randomTimeOrderedId);
  }

  private recordsOf<K extends ObjectType>(type: K): Map<string, RecordedObjects[K]> {
    const known = this.records[type];
    if (known) return known;
    const records: RecordsByUuid[K] = new Map();
    this.records[type] = records;
    return records;
  }

  /** The record as it is now (or as created() was given it), remembered for the answer. */
  private async read<K extends ObjectType>(type: K, uuid: string, given: boolean): Promise<RecordedObjects[K]> {
    const records = this.recordsOf(type);
    const known = given ? records.get(uuid) : undefined;
    if (known !== undefined) return known;
    const record = await this.load(type, uuid);
    records.set(uuid, record);
    return record;
  }

  private async eventFor(entry: Entry): Promise<NewEvent | null> {
    const after = await this.read(entry.type, entry.uuid, entry.given === true);
    const event = eventOf(entry, after, definitionOf(entry.type).embeds);
    if (!event) return null;
    return { companyId: this.companyId, uuid: randomTimeOrderedId(), type: event.type, objectType: entry.type, objectUuid: entry.uuid, data: event.data };
  }
}

function eventOf(entry: Entry, after: ApiRecord, embeds: readonly string[]): { type: EventType; data: unknown } | null {
  if (entry.kind === 'created' || entry.before === null) return { type: `${entry.type}.created`, data: { object: after } };
  const before = entry.before;
  if (before.deleted_at == null && after.deleted_at != null) return { type: `${entry.type}.deleted`, data: { object: after } };
  if (JSON.stringify(before) === JSON.stringify(after)) return null;
  return {
    type: `${entry.type}.updated`,
    data: { object: after, previous_attributes: previousAttributes(before, after, embeds) },
  };
}

/**
 * The event of a change of one record from `before` to `after` (its GET forms) made outside the recorder (a
 * one-statement write): updated or deleted, with the changed fields; null when nothing changed.
 */
export function updatedEvent<K extends ObjectType>(
  companyId: string,
  type: K,
  uuid: string,
  before: RecordedObjects[K],
  after: RecordedObjects[K],
): NewEvent | null {
  const entry: Entry = { type, uuid, kind: 'target', before: before as unknown as ApiRecord };
  const described = eventOf(entry, after as unknown as ApiRecord, definitionOf(type).embeds);
  return described && { companyId, uuid: randomTimeOrderedId(), type: described.type, objectType: type, objectUuid: uuid, data: described.data };
}

type Write<R> = (changes: Changes) => Promise<R>;
/** Who writes: the company, the If-Match of a conditional write and the Idempotency-Key of a keyed one. */
type WriteActor = Pick<Actor, 'companyId' | 'ifMatch' | 'idempotency'>;

/**
 * Runs a write in one transaction that records its events (DECISIONS §9.1): the write remembers what it
 * changes through `changes`, and the events are written before the commit. A write that returns
 * changes.answer(type, uuid) resolves to that record, as read at the end of the transaction. A keyed request
 * (an Idempotency-Key) has its key completed with that answer in the same transaction (shared/keyed-writes.ts).
 */
export function recordChanges<T>(db: Db, actor: WriteActor, write: Write<Answer<T>>, context?: ChangeContext): Promise<T>;
export function recordChanges(db: Db, actor: WriteActor, write: Write<void>, context?: ChangeContext): Promise<void>;
export async function recordChanges<T>(
  db: Db,
  actor: WriteActor,
  write: Write<Answer<T> | void>,
  context: ChangeContext = {},
): Promise<T | void> {
  return keyedWrite(actor, () =>
    db.transaction(async (tx) => {
      markRecording(tx);
      const changes = new Changes(tx, actor, context);
      const answer = await write(changes);
      await changes.flush();
      if (!(answer instanceof Answer)) return undefined;
      const value = answer.value();
      // A keyed request's answer is kept in this transaction: the key completes with the work or not at all.
      const completion = keyCompletion(actor, value, answer.createdUuid);
      await insertKeyCompletion(tx, completion);
      markCompleted(actor, completion);
      return value;
    }),
  );
}

/**
 * DELETE of a record that needs nothing else: the live record locked, checked against If-Match, marked
 * deleted and its event recorded, in one transaction.
 */
export async function removeRecord(db: Db, actor: Pick<Actor, 'companyId' | 'ifMatch'>, type: ObjectType, uuid: string): Promise<void> {
  if (definitionOf(type).fromRow) {
    await changeRecord(db, actor, type, uuid, () => ({ deletedAt: new Date() }));
    return;
  }
  return recordChanges(db, actor, async (changes) => {
    await changes.target(type, uuid);
    await softDelete(changes.tx, definitionOf(type).table, actor.companyId, uuid);
  });
}

/**
 * A create that needs nothing else in its transaction, in one statement (one round trip, no BEGIN or
 * COMMIT): the row (the values given, the schema's defaults, created_at and updated_at from this clock),
 * its created event with the record built by the type's mapper from that same row (so the event carries
 * the record exactly as its GET answers it, without reading it back), the event's webhook deliveries, and
 * a keyed request's Idempotency-Key completed with its answer. Answers the record.
 */
export async function createRecord<K extends ObjectType>(
  db: Db,
  actor: WriteActor,
  type: K,
  values: Record<string, unknown> & { uuid: string },
): Promise<RecordedObjects[K]> {
  const definition = definitionOf(type);
  if (!definition.fromRow) throw new Error(`The ${type} records have no fromRow: they cannot be created in one statement`);
  const row = newRow<Record<string, unknown> & { uuid: string }>(definition.table, { ...values, companyId: actor.companyId }, new Date());
  const record = definition.fromRow(row as never);
  await createCheckedRecord(db, actor, type, row, record);
  return record;
}

/**
 * createRecord for a row made by the caller (newRow) with its record (the resource's mapper over the row
 * and what it embeds, read beforehand), written only when `guard`'s checks pass in the same statement
 * (what the record embeds is still as read, ...), with the guard's further events. Answers null when it was
 * not written (nothing was; the caller reads again and retries, or takes another path), else the values the
 * statement gave the guard's marks, already filled into its events and the key's answer: the caller fills
 * them into the record it answers.
 */
export async function createCheckedRecord<K extends ObjectType>(
  db: Db,
  actor: WriteActor,
  type: K,
  row: Record<string, unknown> & { uuid: string },
  record: RecordedObjects[K],
  guard?: CreateGuard,
): Promise<MarkValues | null> {
  const table = definitionOf(type).table;
  const event: NewEvent = {
    companyId: actor.companyId,
    uuid: randomTimeOrderedId(),
    type: `${type}.created`,
    objectType: type,
    objectUuid: row.uuid,
    data: { object: record },
  };
  const completion = keyCompletion(actor, record, row.uuid);
  const written = await keyedWrite(actor, () =>
    insertRecordWithEvent(db, getTableName(table), rowColumns(table, row), event, completion, randomTimeOrderedId, guard),
  );
  if (written) markCompleted(actor, completion && { ...completion, body: fillMarks(completion.body, written) });
  return written;
}

/** How many times a change is tried unlocked when another write changed its record between its two statements; then it locks. */
const CHANGE_ATTEMPTS = 3;

/**
 * An update or soft delete of a record that changes nothing else, in two round trips and no transaction:
 * the live row is read with its version (404 when there is none), checked against If-Match, and `change`
 * gives the new values (it may refuse them, or check references); then one statement writes the new row (the
 * record from the type's mapper, updated_at from this clock) with its event, only if the row is still the
 * version read. When another write came between, the change starts over on the row as it is now (its
 * If-Match is checked again), so of two writes with the same If-Match only the first succeeds. Answers the
 * record after the change.
 */
export async function changeRecord<K extends ObjectType>(
  db: Db,
  actor: Pick<Actor, 'companyId' | 'ifMatch'>,
  type: K,
  uuid: string,
  change: (row: never) => Record<string, unknown> | Promise<Record<string, unknown>>,
): Promise<RecordedObjects[K]> {
  const definition = definitionOf(type);
  const fromRow = definition.fromRow;
  if (!fromRow) throw new Error(`The ${type} records have no fromRow: they cannot be changed in one statement`);
  for (let attempt = 1; ; attempt++) {
    const found = await findVersionedRow<Record<string, unknown>>(db, definition.table, actor.companyId, uuid);
    if (!found) throw notFound(definition.noun);
    const { version, ...row } = found;
    const before = fromRow(row as never) as ApiRecord;
    assertIfMatch(actor.ifMatch, before);
    const values = await change(row as never);
    const next = changedRow(definition.table, row, values, new Date());
    const after = fromRow(next as never);
    const event = updatedEvent(actor.companyId, type, uuid, before as RecordedObjects[K], after);
    const where = { companyId: actor.companyId, uuid, version };
    const written = await updateRecordWithEvent(db, getTableName(definition.table), rowColumns(definition.table, next), where, event, randomTimeOrderedId);
    if (written) return after;
    if (attempt >= CHANGE_ATTEMPTS) {
      // The record keeps changing under the unlocked read (many writers at once): the row locked, checked
      // against If-Match, changed and recorded in one transaction, which always gets its turn.
      return recordChanges(db, actor, async (changes) => {
        const locked = await changes.target(type, uuid);
        await updateRow(changes.tx, definition.table, actor.companyId, uuid, await change(locked as never));
        return changes.answer(type, uuid);
      });
    }
  }
}
