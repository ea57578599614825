import { sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';

/**
 * Records read in their API form: a select list that names each column as its API field and writes each
 * timestamp as the text `Date.prototype.toISOString` gives (UTC, milliseconds, `Z`; PostgreSQL's `MS`
 * truncates the microseconds as JavaScript's date parser does), of which PostgreSQL writes the JSON text
 * (apiJsonSelect). Only columns whose value already is the API value qualify (text, uuid, boolean, jsonb,
 * integer, date); anything else (numeric money) is refused when the list is built. Each resource keeps its
 * mapper for rows read otherwise; a test holds the two to the same JSON, byte for byte.
 */
export type ApiFields = Readonly<Record<string, PgColumn>>;

const AS_IS = new Set(['PgText', 'PgUUID', 'PgBoolean', 'PgJsonb', 'PgInteger', 'PgDateString', 'PgVarchar']);

/** `to_char` pattern of `toISOString()` for a timestamptz taken at UTC. */
const ISO_PATTERN = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';

function fieldSql(name: string, column: PgColumn): SQL {
  const alias = sql.identifier(name);
  if (column.columnType === 'PgTimestamp' || column.columnType === 'PgTimestampString') {
    if (!(column as PgColumn & { withTimezone?: boolean }).withTimezone) {
      throw new Error(`${column.name}: only timestamps with a time zone have an API form here`);
    }
    return sql`to_char(${column} at time zone 'UTC', ${sql.raw(`'${ISO_PATTERN}'`)}) as ${alias}`;
  }
  if (!AS_IS.has(column.columnType)) throw new Error(`${column.name} (${column.columnType}) has no API form as it is read`);
  // A date as the driver's text of it: row_to_json would write BC dates its own way.
  return column.columnType === 'PgDateString' ? sql`${column}::text as ${alias}` : sql`${column} as ${alias}`;
}

const jsonbFields = new WeakMap<ApiFields, string[]>();

/** The fields kept as jsonb: PostgreSQL writes their text with spaces and its own number forms, not as JSON.stringify does. */
function jsonbFieldsOf(fields: ApiFields): string[] {
  let names = jsonbFields.get(fields);
  if (!names) {
    names = Object.entries(fields)
      .filter(([, column]) => column.columnType === 'PgJsonb')
      .map(([name]) => name);
    jsonbFields.set(fields, names);
  }
  return names;
}

/** A row read by apiJsonSelect: the record's JSON text, and the text of each jsonb field under its name. */
export type ApiJsonRow = { json: string } & Record<string, string | null>;

/**
 * `select ... from <table>` of the API form of `fields` as one JSON text per row, in a column `json`, for the
 * caller's `where`: `row_to_json` of the API-form list, which writes compact JSON in the list's field order
 * and escapes text as JSON.stringify does (`\"`, `\\`, `\b\f\n\r\t`, other control characters as `\u00xx`). A
 * jsonb field is written null there and read beside it, under its name, as text; apiJsonText puts it in. The
 * driver then answers one text per row, which is sent as it is: no field is parsed, named or serialized in
 * Node. (A lateral select: as a scalar subquery in the select list it costs PostgreSQL a fifth more.) `rows`
 * reads a subquery named as the table instead of the table itself (a page chosen before it is written).
 */
export function apiJsonSelect(table: PgTable, fields: ApiFields, rows: SQL = sql`${table}`): SQL {
  const nested = new Set(jsonbFieldsOf(fields));
  const list = sql.join(
    Object.entries(fields).map(([name, column]) => (nested.has(name) ? sql`null::jsonb as ${sql.identifier(name)}` : fieldSql(name, column))),
    sql`, `,
  );
  const beside = [...nested].map((name) => sql`, ${fields[name]}::text as ${sql.identifier(name)}`);
  return sql`select row_to_json(api)::text as json${sql.join(beside)} from ${rows} cross join lateral (select ${list}) api`;
}

/** The JSON text of a row read by apiJsonSelect, each jsonb field written in as JSON.stringify writes it. */
export function apiJsonText(row: ApiJsonRow, fields: ApiFields): string {
  let json = row.json;
  for (const name of jsonbFieldsOf(fields)) {
    const text = row[name];
    // A quote inside a JSON string is always escaped, so `"name":null` can only be the field itself.
    if (text !== null && text !== undefined) json = json.replace(`"${name}":null`, () => `"${name}":${JSON.stringify(JSON.parse(text))}`);
  }
  return json;
}
