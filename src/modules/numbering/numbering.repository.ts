import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { onDatabaseNotice } from '../../db/notices.js';
import { estimates, invoices, numberingCounters, payments } from '../../db/schema/index.js';
import { executePrepared } from '../../db/perf/prepared.js';

export type NumberKind = 'invoice' | 'estimate' | 'payment';
export type CounterRow = typeof numberingCounters.$inferSelect;

/**
 * A company's counter before it changes anything: the prefix comes from default_number_prefix() (migration
 * 0012, which the numbering trigger uses too), padding and next number from the column defaults.
 */
const defaults = (kind: NumberKind) => ({
  prefix: sql`default_number_prefix(${kind}::text)`,
  padding: numberingCounters.padding.default as number,
  nextNumber: numberingCounters.nextNumber.default as number,
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
  const { prefix, padding, nextNumber } = defaults(kind);
  const result = await db.execute(sql`
    select coalesce(${c.prefix}, ${prefix}) as prefix, coalesce(${c.padding}, ${padding}::int) as padding,
      coalesce(${c.nextNumber}, ${nextNumber}::bigint) as next_number, ${c.overrideNextNumber} as override_next_number,
      document_number(coalesce(${c.prefix}, ${prefix}), coalesce(${c.padding}, ${padding}::int),
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

/** The document table of each kind and its number columns. */
const DOCUMENTS = {
  invoice: { table: invoices, number: invoices.invoiceNumber, seq: invoices.invoiceSeq },
  estimate: { table: estimates, number: estimates.estimateNumber, seq: estimates.estimateSeq },
  payment: { table: payments, number: payments.paymentNumber, seq: payments.paymentSeq },
} as const;

/**
 * The number a document got. Documents are numbered when their transaction commits, by the deferred
 * trigger number_document() (migration 0012), so this is read after the commit.
 */
export async function readDocumentNumber(db: Db, companyId: string, kind: NumberKind, documentUuid: string): Promise<string> {
  const { table, number } = DOCUMENTS[kind];
  const rows = await executePrepared<{ number: string }>(
    db,
    `read_${kind}_number`,
    () => sql`select ${sql.identifier(number.name)} as number from ${table}
      where ${table.companyId} = ${sql.placeholder('companyId')}::uuid and ${table.uuid} = ${sql.placeholder('documentUuid')}::uuid`,
    { companyId, documentUuid },
  );
  return rows[0].number;
}

/**
 * Numbers the trigger sent with their commits (migration 0013: notice document_numbered, detail
 * "<uuid> <number>"), by document uuid, until the create that committed takes its own. A create that
 * failed after its trigger ran leaves its entry behind; the oldest entries go beyond a bound.
 */
const noticedNumbers = new Map<string, string>();
const NOTICED_NUMBERS_KEPT = 10_000;

onDatabaseNotice((notice) => {
  if (notice.message !== 'document_numbered' || !notice.detail) return;
  const space = notice.detail.indexOf(' ');
  if (space < 0) return;
  if (noticedNumbers.size >= NOTICED_NUMBERS_KEPT) noticedNumbers.delete(noticedNumbers.keys().next().value!);
  noticedNumbers.set(notice.detail.slice(0, space), notice.detail.slice(space + 1));
});

/** The number the trigger sent for the document when its create committed, taken once. */
export function takeNoticedNumber(uuid: string): string | undefined {
  const number = noticedNumbers.get(uuid);
  if (number !== undefined) noticedNumbers.delete(uuid);
  return number;
}

/** Creates the default counter row unless it exists (a concurrent creator wins quietly). */
export async function ensureCounter(tx: Db, companyId: string, kind: NumberKind): Promise<void> {
  await tx.insert(numberingCounters).values({ companyId, kind, prefix: defaults(kind).prefix }).onConflictDoNothing();
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
