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
