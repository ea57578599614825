import { getTableName, type Table } from 'drizzle-orm';
import type { Db } from '../db/client.js';

/**
 * Tables whose writes record no event (DECISIONS §9.1 lists the recorded objects). Every other tenant
 * table may be written only inside a change-recording transaction, so a new resource cannot forget its
 * events: its first write fails loudly until it records them or is listed here.
 */
const UNRECORDED_TABLES = new Set(['webhook_endpoints', 'webhook_deliveries', 'users', 'companies']);

const recording = new WeakSet<object>();

/** Marks a transaction as one whose writes are recorded as events. */
export function markRecording(tx: Db): void {
  recording.add(tx);
}

/** Throws unless writing `table` through `db` records its events. */
export function assertRecordedWrite(db: Db, table: Table): void {
  const name = getTableName(table);
  if (UNRECORDED_TABLES.has(name) || recording.has(db)) return;
  throw new Error(`A write to ${name} must run inside a change-recording transaction (recordChanges)`);
}
