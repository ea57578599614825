import type { SQL } from 'drizzle-orm';
import type { Database } from '../../src/db/client.js';

/** The rows a raw SQL query answers, on the test's database. */
export async function rowsOf<T>(database: Database, query: SQL): Promise<T[]> {
  const result = (await database.db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}
