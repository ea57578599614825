import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { estimates, invoices, numberingCounters, payments } from '../../db/schema/index.js';
import { assertRecordedWrite } from '../../shared/recorded-writes.js';
import { executePrepared } from '../../db/perf/prepared.js';

export type NumberKind = 'invoice' | 'estimate' | 'payment';
export type CounterRow = typeof numberingCounters.$inferSelect;

export const DEFAULT_PREFIX: Record<NumberKind, string> = { invoice: 'INV-', estimate: 'EST-', payment: 'PAY-' };

const defaults = (companyId: string, kind: NumberKind) => ({
  companyId,
  kind,
  prefix: DEFAULT_PREFIX[kind],
  padding: 4,
  nextNumber: 1,
  overrideNextNumber: null,
});

/** The one company-and-kind counter row. */
const counterOf = (companyId: string, kind: NumberKind) =>
  and(eq(numberingCounters.companyId, companyId), eq(numberingCounters.kind, kind));

export interface CounterSettings {
  prefix: string;
  padding: number;
  nextNumber: number;
  overrideNextNumber: number | null;
  /** The number the next document gets, formatted by document_number() (migration 0011). */
  nextFormatted: string;
}

/** The counter's settings (defaults when no row was ever written) and its next number formatted, without locking. */
export async function readCounter(db: Db, companyId: string, kind: NumberKind): Promise<CounterSettings> {
  const c = numberingCounters;
  const { prefix, padding, nextNumber } = defaults(companyId, kind);
  const result = await db.execute(sql`
    select coalesce(${c.prefix}, ${prefix}::text) as prefix, coalesce(${c.padding}, ${padding}::int) as padding,
      coalesce(${c.nextNumber}, ${nextNumber}::bigint) as next_number, ${c.overrideNextNumber} as override_next_number,
      document_number(coalesce(${c.prefix}, ${prefix}::text), coalesce(${c.padding}, ${padding}::int),
        coalesce(${c.overrideNextNumber}, ${c.nextNumber}, ${nextNumber}::bigint)) as next_formatted
    from (select 1) as one left join ${c} on ${counterOf(companyId, kind)}`);
  const [row] = (result as unknown as { rows: Array<Record<string, string | number | null>> }).rows;
  return {
    prefix: String(row.prefix),
    padding: Number(row.padding),
    nextNumber: Number(row.next_number),
    overrideNextNumber: row.override_next_number === null ? null : Number(row.override_next_number),
    nextFormatted: String(row.next_formatted),
  };
}

/** Creates the counter row if missing and locks it for the rest of the transaction. */
export async function lockCounter(tx: Db, companyId: string, kind: NumberKind): Promise<CounterRow> {
  await ensureCounter(tx, companyId, kind);
  const [locked] = await tx.select().from(numberingCounters).where(counterOf(companyId, kind)).for('update');
  return locked;
}

/** The document table of each kind: its number columns and the API field that shows the number. */
const DOCUMENTS = {
  invoice: { table: invoices, number: invoices.invoiceNumber, seq: invoices.invoiceSeq, field: 'invoice_number' },
  estimate: { table: estimates, number: estimates.estimateNumber, seq: estimates.estimateSeq, field: 'estimate_number' },
  payment: { table: payments, number: payments.paymentNumber, seq: payments.paymentSeq, field: 'payment_number' },
} as const;

/**
 * Takes the next number for a document already written without one, in one statement: the counter row
 * is locked (FOR UPDATE), the override or next_number is taken, and the counter moves to
 * max(next_number, taken + 1) with the override cleared; the document gets the formatted number and its
 * seq (its updated_at stays: its GET still equals its event), and the document's created event, stored
 * with the field null, gets the number in its JSON text (the first `"<field>":null` of that text is the
 * document's own key: the mappers write it right after the uuid, and no embed carries it). The counter stays locked until commit, so nothing
 * else should follow this statement. Null when the company has no counter row yet.
 */
export async function assignNextNumber(
  tx: Db,
  companyId: string,
  kind: NumberKind,
  documentUuid: string,
  eventUuid: string | null,
): Promise<string | null> {
  const { table, number, seq, field } = DOCUMENTS[kind];
  const placeholder = `"${field}":null`;
  assertRecordedWrite(tx, table);
  const company = sql`${sql.placeholder('companyId')}::uuid`;
  const rows = await executePrepared<{ number: string }>(
    tx,
    `assign_${kind}_number`,
    () => sql`
    with current as (
      select coalesce(override_next_number, next_number) as seq from numbering_counters
      where company_id = ${company} and kind = ${kind}
      for update
    ), counter as (
      update numbering_counters counter
      set next_number = greatest(counter.next_number, current.seq + 1), override_next_number = null, updated_at = now()
      from current
      where counter.company_id = ${company} and counter.kind = ${kind}
      returning document_number(counter.prefix, counter.padding, current.seq) as number, current.seq as seq
    ), document as (
      update ${table} set ${sql.identifier(number.name)} = counter.number, ${sql.identifier(seq.name)} = counter.seq
      from counter
      where ${table.companyId} = ${company} and ${table.uuid} = ${sql.placeholder('documentUuid')}::uuid
    ), event as (
      -- The first occurrence only: the field follows the record's uuid, before any free-form object
      -- (payment_details) in which a client could have sent the same key.
      update events set data = overlay(events.data::text placing ${`"${field}":`} || to_json(counter.number)::text
        from position(${placeholder} in events.data::text) for ${placeholder.length})::json
      from counter
      where events.company_id = ${company} and events.uuid = ${sql.placeholder('eventUuid')}::uuid
        and position(${placeholder} in events.data::text) > 0
    )
    select number from counter`,
    { companyId, documentUuid, eventUuid },
  );
  return rows[0]?.number ?? null;
}

/** Creates the default counter row unless it exists (a concurrent creator wins quietly). */
export async function ensureCounter(tx: Db, companyId: string, kind: NumberKind): Promise<void> {
  await tx.insert(numberingCounters).values(defaults(companyId, kind)).onConflictDoNothing();
}

export async function writeCounter(
  tx: Db,
  companyId: string,
  kind: NumberKind,
  values: Partial<Pick<CounterRow, 'prefix' | 'padding' | 'nextNumber' | 'overrideNextNumber'>>,
) {
  await tx
    .update(numberingCounters)
    .set({ ...values, updatedAt: new Date() })
    .where(counterOf(companyId, kind));
}

/** Whether any document of the kind (soft-deleted ones included) ever had this number. */
export async function numberUsed(db: Db, companyId: string, kind: NumberKind, seq: number): Promise<boolean> {
  const document = DOCUMENTS[kind];
  const rows = await db
    .select({ one: sql`1` })
    .from(document.table)
    .where(and(eq(document.table.companyId, companyId), eq(document.seq, seq)))
    .limit(1);
  return rows.length > 0;
}
