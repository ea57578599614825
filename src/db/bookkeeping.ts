import { sql } from 'drizzle-orm';

/**
 * A one-row subquery that gives the statement's transaction its own application_name. Writes that record
 * no event (usage counts, keys' last use, the purges of expired keys and events) take their rows from it,
 * so the name is set before their first row is written, which is what gives the transaction its id: the
 * events feed's horizon waits only for transactions of the API's own application_name (FEED_HORIZON,
 * events.repository.ts), so this bookkeeping never holds another company's feed back (§11). The name is
 * local to the transaction, and PostgreSQL restores the connection's own when it ends. No round trip is
 * added.
 */
export const OUTSIDE_FEED = sql.raw(
  `(select set_config('application_name', current_setting('application_name') || '/bookkeeping', true) as name)`,
);
