import pg from 'pg';
import { vi } from 'vitest';

/**
 * Statements the background work sends on its own timers, whatever the requests do (usage counts, keys'
 * last use, the delivery worker, the idempotency and event purges); a request's one-statement write (a WITH
 * of CTEs) names some of the same tables.
 */
const BACKGROUND = /usage_counters|webhook_deliveries|last_used_at|idempotency_keys|from "?events"? where .*created_at /;
/** The delivery worker's claim, the one background statement that is a WITH too. */
const DELIVERY_CLAIM = /^with due as \(/i;
const isBackground = (text: string) => {
  const statement = text.trimStart();
  return BACKGROUND.test(statement) && (!/^with /i.test(statement) || DELIVERY_CLAIM.test(statement));
};

/**
 * Records the statements requests send through node-postgres from now on, the background's left out;
 * vi.restoreAllMocks() stops it. PGlite answers through its own client and is not seen.
 */
export function recordStatements(): string[] {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string };
    const text = typeof config === 'string' ? config : (config?.text ?? '');
    if (!isBackground(text)) sent.push(text);
    return (query as (...values: unknown[]) => unknown).apply(this, args) as never;
  });
  return sent;
}
