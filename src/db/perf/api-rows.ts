import { sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';

/**
 * Rows read in their API form: a select list that names each column as its API field and writes each
 * timestamp as the text `Date.prototype.toISOString` gives (UTC, milliseconds, `Z`; PostgreSQL's `MS`
 * truncates the microseconds as JavaScript's date parser does). The driver's row object is then the
 * record itself, in the field order of the list: it is serialized as it comes, with no row mapped to
 * another object on the way. Only columns whose driver value already is the API value qualify (text,
 * uuid, boolean, jsonb, integer, date as text); anything else (numeric money) is refused when the list is
 * built. Each resource keeps its mapper for rows read otherwise; a test holds the two to the same JSON.
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
  return sql`${column} as ${alias}`;
}

/** The select list of the API form of `fields` (API field name -> column), in their order. */
export function apiColumns(fields: ApiFields): SQL {
  return sql.join(
    Object.entries(fields).map(([name, column]) => fieldSql(name, column)),
    sql`, `,
  );
}
