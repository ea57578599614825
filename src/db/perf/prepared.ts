import { Placeholder, type SQL } from 'drizzle-orm';
import pg from 'pg';
import type { PgDialect } from 'drizzle-orm/pg-core';
import { databaseOf, namedStatementsAllowed, type Db } from '../client.js';

/**
 * Opt-in speed for hot statements: built once per database and name, so a hot statement skips building
 * its SQL on every request, and prepared under that name on each connection, so PostgreSQL skips parsing
 * and planning it. Named on the server only when DATABASE_PREPARED_STATEMENTS allows it (off behind a
 * transaction pooler); unnamed, the built SQL is still reused.
 */

export interface PreparedStatement<R> {
  execute(params: Record<string, unknown>): Promise<R>;
}

/** A prepared statement answering rows. */
export type PreparedRead = PreparedStatement<unknown[]>;

/** The statements of each database (databaseOf), by name. */
const statementsOf = new WeakMap<object, Map<string, PreparedStatement<unknown>>>();

function statementsFor(db: Db): Map<string, PreparedStatement<unknown>> {
  const database = databaseOf(db);
  let statements = statementsOf.get(database);
  if (!statements) {
    statements = new Map();
    statementsOf.set(database, statements);
  }
  return statements;
}

/** Whether a statement of this name was already built for the handle's database. */
export function isPrepared(db: Db, name: string): boolean {
  return statementsFor(db).has(name);
}

/**
 * The statement `name`, built once per database with placeholders for its values, run on the handle's own
 * connection: the pool for a database, the transaction's connection for a transaction, so a statement
 * built once serves every transaction too. A name must always stand for the same SQL.
 */
export function prepared<R = unknown[]>(
  db: Db,
  name: string,
  build: () => { prepare(name: string): PreparedStatement<R> },
): PreparedStatement<R> {
  const statements = statementsFor(db);
  let statement = statements.get(name) as PreparedStatement<R> | undefined;
  if (!statement) {
    statement = build().prepare(namedStatementsAllowed(db) ? name : '');
    statements.set(name, statement);
  }
  return onConnectionOf(db, statement);
}

/**
 * The statement run through the handle's client. Drizzle binds a prepared query to the session that
 * built it (its `client`); a view of it with the handle's client runs it there instead.
 */
function onConnectionOf<R>(db: Db, statement: PreparedStatement<R>): PreparedStatement<R> {
  const client = (db._.session as unknown as { client: unknown }).client;
  const bound = statement as PreparedStatement<R> & { client: unknown };
  if (bound.client === client) return statement;
  const view = Object.create(statement) as PreparedStatement<R> & { client: unknown };
  view.client = client;
  return view;
}

/**
 * prepared() for a statement written as SQL (values as sql.placeholder): answers its rows as the driver
 * returns them, without mapping to columns.
 */
export async function executePrepared<Row>(db: Db, name: string, build: () => SQL, params: Record<string, unknown>): Promise<Row[]> {
  const statement = prepared<{ rows: Row[] }>(db, name, () => ({
    prepare: (statementName: string) => {
      const query = (databaseOf(db) as PgDialect).sqlToQuery(build());
      return db._.session.prepareQuery(query, undefined, statementName, false) as unknown as PreparedStatement<{ rows: Row[] }>;
    },
  }));
  return (await statement.execute(params)).rows;
}

/** A statement built once: its text and, per parameter, the placeholder it takes its value from. */
interface BuiltStatement {
  text: string;
  params: unknown[];
}

const builtOf = new WeakMap<object, Map<string, BuiltStatement>>();

/**
 * executePrepared for reads whose columns the driver answers as they are (text, uuid, boolean, jsonb,
 * integers: an API-form select, src/db/perf/api-rows.ts): on node-postgres the statement goes to the
 * connection directly, with pg's own parsers, and each row comes back as the object pg builds, with no
 * further layer per row or per statement. On the embedded database it runs through executePrepared.
 */
export async function queryRows<Row>(db: Db, name: string, build: () => SQL, params: Record<string, unknown>): Promise<Row[]> {
  const client = (db._.session as unknown as { client: unknown }).client;
  if (!(client instanceof pg.Pool || client instanceof pg.Client)) return executePrepared<Row>(db, name, build, params);
  const database = databaseOf(db);
  let statements = builtOf.get(database);
  if (!statements) {
    statements = new Map();
    builtOf.set(database, statements);
  }
  let built = statements.get(name);
  if (!built) {
    const query = (database as PgDialect).sqlToQuery(build());
    built = { text: query.sql, params: query.params };
    statements.set(name, built);
  }
  const values = built.params.map((param) => (param instanceof Placeholder ? params[param.name] : param));
  const config = namedStatementsAllowed(db) ? { name, text: built.text, values } : { text: built.text, values };
  const result = await (client as pg.Pool).query<Row & pg.QueryResultRow>(config);
  return result.rows;
}
