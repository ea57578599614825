import { PgTransaction } from 'drizzle-orm/pg-core';
import { namedStatementsAllowed, type Db } from '../client.js';

/**
 * Opt-in speed for hot statements: prepared once per database handle and name, so a hot read skips
 * building its SQL on every request and PostgreSQL skips parsing it. Named on the server only when
 * DATABASE_PREPARED_STATEMENTS allows it (off behind a transaction pooler).
 */

export interface PreparedRead {
  execute(params: Record<string, unknown>): Promise<unknown[]>;
}

/**
 * Runs a prepared read and answers its rows as the driver gives them, keyed by column name, without the
 * ORM's per-cell mapping (timestamps stay text): for wide hot reads whose repository maps the rows
 * itself. Drizzle's node-postgres and PGlite prepared queries both implement `all()`; it is not in
 * their declared type.
 */
export function unmappedRows(statement: PreparedRead, params: Record<string, unknown>): Promise<unknown[]> {
  return (statement as PreparedRead & { all(params: Record<string, unknown>): Promise<unknown[]> }).all(params);
}

export const preparedReads = new WeakMap<object, Map<string, PreparedRead>>();

/**
 * A statement prepared once per database handle and name, so hot reads skip building their SQL on
 * every request and PostgreSQL skips parsing it. Transactions build their queries as usual.
 */
export function prepared(db: Db, name: string, build: () => { prepare(name: string): PreparedRead }): PreparedRead {
  let statements = preparedReads.get(db);
  if (!statements) {
    statements = new Map();
    preparedReads.set(db, statements);
  }
  let statement = statements.get(name);
  if (!statement) {
    // Unnamed, the built SQL is still reused; only the server-side statement is not kept.
    statement = build().prepare(namedStatementsAllowed(db) ? name : '');
    statements.set(name, statement);
  }
  return statement;
}

export const isTransaction = (db: Db) => db instanceof PgTransaction;
