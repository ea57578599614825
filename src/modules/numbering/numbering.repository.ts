import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { estimates, invoices, numberingCounters, payments } from '../../db/schema/index.js';

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

/** The counter row (defaults when none was ever written), without locking. */
export async function readCounter(db: Db, companyId: string, kind: NumberKind) {
  const [row] = await db.select().from(numberingCounters).where(counterOf(companyId, kind)).limit(1);
  return row ?? { ...defaults(companyId, kind), updatedAt: new Date() };
}

/** Creates the counter row if missing and locks it for the rest of the transaction. */
export async function lockCounter(tx: Db, companyId: string, kind: NumberKind): Promise<CounterRow> {
  await ensureCounter(tx, companyId, kind);
  const [locked] = await tx.select().from(numberingCounters).where(counterOf(companyId, kind)).for('update');
  return locked;
}

export interface TakenNumber {
  prefix: string;
  padding: number;
  seq: number;
}

/**
 * Takes the next number in one statement: the counter row is locked (FOR UPDATE), the override or
 * next_number is taken, and the counter moves to max(next_number, taken + 1) with the override
 * cleared. Null when the company has no counter row yet. One statement keeps the row locked for as
 * short a time as possible, which bounds how long concurrent creates queue behind each other.
 */
export async function takeNextNumber(tx: Db, companyId: string, kind: NumberKind): Promise<TakenNumber | null> {
  const counter = numberingCounters;
  const current = tx.$with('current').as(
    tx
      .select({ seq: sql<number>`coalesce(${counter.overrideNextNumber}, ${counter.nextNumber})`.mapWith(Number).as('seq') })
      .from(counter)
      .where(counterOf(companyId, kind))
      .for('update'),
  );
  const [taken] = await tx
    .with(current)
    .update(counter)
    .set({ nextNumber: sql`greatest(${counter.nextNumber}, ${current.seq} + 1)`, overrideNextNumber: null, updatedAt: new Date() })
    .from(current)
    .where(counterOf(companyId, kind))
    .returning({ prefix: counter.prefix, padding: counter.padding, seq: current.seq });
  return taken ?? null;
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
  const table = kind === 'invoice' ? invoices : kind === 'estimate' ? estimates : payments;
  const seqColumn = kind === 'invoice' ? invoices.invoiceSeq : kind === 'estimate' ? estimates.estimateSeq : payments.paymentSeq;
  const rows = await db
    .select({ one: sql`1` })
    .from(table)
    .where(and(eq(table.companyId, companyId), eq(seqColumn, seq)))
    .limit(1);
  return rows.length > 0;
}
