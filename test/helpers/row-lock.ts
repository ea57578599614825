import pg from 'pg';

/**
 * Runs `request` while another connection holds a row locked: once a backend of the database waits on a
 * lock (the request's write reached the row), `change` (SQL with $1 the row's uuid) is written under the
 * lock and committed, and the request goes on against the changed row. Answers the request's result. For a
 * write that reads first and writes later: the row changes between the two.
 */
export async function changedWhileRequestWaits<T>(
  databaseUrl: string,
  row: { table: string; uuid: string; change: string },
  request: () => Promise<T>,
): Promise<T> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query(`select 1 from ${row.table} where uuid = $1 for update`, [row.uuid]);
    const running = request();
    for (let waited = 0; ; waited += 20) {
      const { rows } = await holder.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
      );
      if (rows[0].n > 0) break;
      if (waited > 10_000) throw new Error(`the request never waited on the ${row.table} row`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await holder.query(row.change, [row.uuid]);
    await holder.query('commit');
    return await running;
  } finally {
    await holder.end();
  }
}
