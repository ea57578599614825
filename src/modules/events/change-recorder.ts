import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../db/client.js';
import { notFound } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import { assertIfMatch } from '../../shared/etag.js';
import { markRecording } from '../../shared/recorded-writes.js';
import { findRow, type TenantTable } from '../../shared/tenant-table.js';
import { insertEventsWithDeliveries, type NewEvent } from './events.repository.js';
import type { EventType, ObjectType } from './events.schemas.js';

/** What a loader may need besides the database: how to build photo links. */
export interface ChangeContext {
  photoLinks?: unknown;
}

type ApiRecord = Record<string, unknown>;

/** How the recorder reads one object type: the record as its GET with include_deleted=true answers it. */
export interface RecordedType {
  table: TenantTable;
  /** Noun of the 404 for a missing target. */
  noun: string;
  /** Top-level fields that are embedded objects: left out of previous_attributes. */
  embeds: readonly string[];
  load(db: Db, companyId: string, uuid: string, context: ChangeContext): Promise<unknown>;
}

const registry = new Map<ObjectType, RecordedType>();

/** Each module registers its loader next to its mapper, so the event carries exactly what its GET answers. */
export function registerRecordedType(type: ObjectType, definition: RecordedType): void {
  registry.set(type, definition);
}

function definitionOf(type: ObjectType): RecordedType {
  const definition = registry.get(type);
  if (!definition) throw new Error(`No loader registered for ${type}`);
  return definition;
}

interface Entry {
  type: ObjectType;
  uuid: string;
  kind: 'created' | 'target' | 'touched';
  /** Already recorded by complete(). */
  done?: boolean;
  before: ApiRecord | null;
  /** A created record the caller already holds in its GET form. */
  given?: unknown;
  after?: ApiRecord;
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
  private answerKey: string | null = null;

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
    const row = (await findRow(this.tx, definition.table, this.companyId, uuid, { lock: true })) as Row | null;
    if (!row || (belongs && !belongs(row))) throw notFound(definition.noun);
    const key = `${type}:${uuid}`;
    const known = this.entries.get(key);
    if (known) {
      if (known.before) assertIfMatch(this.actor.ifMatch, known.before);
      known.kind = 'target';
      return row;
    }
    const before = (await definition.load(this.tx, this.companyId, uuid, this.context)) as ApiRecord;
    assertIfMatch(this.actor.ifMatch, before);
    this.entries.set(key, { type, uuid, kind: 'target', before });
    return row;
  }

  /** A record the write changes as a side effect: locked and read before the change; missing is ignored. */
  async touch(type: ObjectType, uuid: string | null | undefined): Promise<void> {
    if (!uuid) return;
    const key = `${type}:${uuid}`;
    if (this.entries.has(key)) return;
    const definition = definitionOf(type);
    const row = await findRow(this.tx, definition.table, this.companyId, uuid, { includeDeleted: true, lock: true });
    if (!row) return;
    const before = (await definition.load(this.tx, this.companyId, uuid, this.context)) as ApiRecord;
    this.entries.set(key, { type, uuid, kind: 'touched', before });
  }

  /** A record this write created; `record` is its GET form when the caller already has it. */
  created(type: ObjectType, uuid: string, record?: unknown): void {
    this.entries.set(`${type}:${uuid}`, { type, uuid, kind: 'created', before: null, given: record });
  }

  /** The record recordChanges answers with: as read at the end of the transaction. */
  answer(type: ObjectType, uuid: string): void {
    this.answerKey = `${type}:${uuid}`;
  }

  /**
   * Records the event of a record whose change is complete, now rather than at the end: a write that
   * takes a company-wide lock afterwards (numbering) then holds it for less time.
   */
  async complete(type: ObjectType, uuid: string | null | undefined): Promise<void> {
    const entry = uuid ? this.entries.get(`${type}:${uuid}`) : undefined;
    if (!entry || entry.done) return;
    const event = await this.eventFor(entry);
    entry.done = true;
    if (event) await insertEventsWithDeliveries(this.tx, [event], () => uuidv7());
  }

  /** Reads every remembered record again and records one event per changed record; primary records first. */
  async flush(): Promise<unknown> {
    const ordered = [...this.entries.values()]
      .filter((entry) => !entry.done)
      .sort((a, b) => Number(a.kind === 'touched') - Number(b.kind === 'touched'));
    const batch: NewEvent[] = [];
    for (const entry of ordered) {
      const event = await this.eventFor(entry);
      if (event) batch.push(event);
    }
    await insertEventsWithDeliveries(this.tx, batch, () => uuidv7());
    return this.answerKey ? this.entries.get(this.answerKey)?.after : undefined;
  }

  private async eventFor(entry: Entry): Promise<NewEvent | null> {
    const definition = definitionOf(entry.type);
    const after = (entry.given ?? (await definition.load(this.tx, this.companyId, entry.uuid, this.context))) as ApiRecord;
    entry.after = after;
    const event = eventOf(entry, after, definition);
    if (!event) return null;
    return { companyId: this.companyId, uuid: uuidv7(), type: event.type, objectType: entry.type, objectUuid: entry.uuid, data: event.data };
  }
}

function eventOf(entry: Entry, after: ApiRecord, definition: RecordedType): { type: EventType; data: unknown } | null {
  if (entry.kind === 'created' || entry.before === null) return { type: `${entry.type}.created`, data: { object: after } };
  const before = entry.before;
  if (before.deleted_at == null && after.deleted_at != null) return { type: `${entry.type}.deleted`, data: { object: after } };
  if (JSON.stringify(before) === JSON.stringify(after)) return null;
  return {
    type: `${entry.type}.updated`,
    data: { object: after, previous_attributes: previousAttributes(before, after, definition.embeds) },
  };
}

/**
 * Runs a write in one transaction that records its events (DECISIONS §9.1): the write remembers what it
 * changes through `changes`, and the events are written before the commit. Answers the record named
 * with changes.answer(), as read at the end of the transaction.
 */
export async function recordChanges(
  db: Db,
  actor: Pick<Actor, 'companyId' | 'ifMatch'>,
  write: (changes: Changes) => Promise<void>,
  context: ChangeContext = {},
): Promise<unknown> {
  return db.transaction(async (tx) => {
    markRecording(tx);
    const changes = new Changes(tx, actor, context);
    await write(changes);
    return changes.flush();
  });
}
