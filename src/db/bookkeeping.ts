import { sql } from 'drizzle-orm';
import type { Db } from './client.js';

/**
 * Runs writes that record no event (usage counts, keys' last use) in a transaction under its own
 * application_name: the events feed's horizon waits only for transactions of the API's application_name
 * (FEED_HORIZON, events.repository.ts), so this bookkeeping never delays another company's feed (§11).
 * The name is set before the first write gives the transaction an id, and PostgreSQL restores the
 * connection's own name when the transaction ends.
 */
export async function writeOutsideFeed<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('application_name', current_setting('application_name') || '/bookkeeping', true)`);
    return work(tx);
  });
}
