/**
 * The reference server of the throughput marks ("tight"): Fastify and node-postgres with plain SQL, no auth,
 * no validation, no events. Started by `npm run bench` for the T scenarios; never part of the API.
 *   GET  /customers?page=P&limit=L   a page of the company's live customers, newest first, and count(*)
 *   GET  /customers/{uuid}           one live customer, read from the API's own customers table (its primary
 *                                    key; tight_customers has none), a named prepared statement unless
 *                                    DATABASE_PREPARED_STATEMENTS=false, as the API does behind PgBouncer
 *   POST /customers                  inserts the JSON body's fields and answers the row
 *   POST /customers/with-event       the same insert and, in its transaction, one event row carrying the
 *                                    customer (BEGIN, INSERT, INSERT, COMMIT): what DECISIONS §9.1 asks of a create
 * Its tables: tight_customers, a copy of the seeded customers with one index, the list order, and no
 * trigger; tight_events, the events table's columns and indexes without foreign keys (bench/run.ts makes
 * both). Environment: DATABASE_URL, PORT, COMPANY_ID (the large company), DATABASE_POOL_SIZE (default 32).
 */
import Fastify from 'fastify';
import pg from 'pg';

const env = process.env;
const companyId = env.COMPANY_ID!;
// Named, so the bench meters its backends' CPU as it does the API's (run.ts, backendPids).
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DATABASE_POOL_SIZE || 32), application_name: 'bench-reference' });
const prepared = env.DATABASE_PREPARED_STATEMENTS !== 'false';
const app = Fastify({ logger: false });

const COLUMNS = [
  'first_name', 'last_name', 'company_name', 'email', 'phone', 'customer_type', 'is_vip', 'physical_address1',
  'physical_address2', 'physical_city', 'physical_state', 'physical_zip', 'notes', 'internal_flags', 'on_my_way_notify_via',
] as const;

app.get('/readyz', async () => ({ ok: true }));

app.get('/customers', async (request) => {
  const query = request.query as { page?: string; limit?: string };
  const limit = Number(query.limit ?? 50);
  const offset = (Number(query.page ?? 1) - 1) * limit;
  const [page, total] = await Promise.all([
    pool.query('select * from tight_customers where company_id = $1 and deleted_at is null order by created_at desc, uuid desc limit $2 offset $3', [companyId, limit, offset]),
    pool.query('select count(*)::int as total from tight_customers where company_id = $1 and deleted_at is null', [companyId]),
  ]);
  return { data: page.rows, total: total.rows[0].total };
});

app.get('/customers/:uuid', async (request, reply) => {
  const { uuid } = request.params as { uuid: string };
  const { rows } = await pool.query({
    ...(prepared ? { name: 'tight_customer_get' } : {}),
    text: 'select * from customers where company_id = $1 and uuid = $2 and deleted_at is null',
    values: [companyId, uuid],
  });
  if (rows.length === 0) return reply.code(404).send({ error: 'not found' });
  return rows[0];
});

/** The INSERT of a create: the body's known fields, a new uuid. */
function insertOf(body: Record<string, unknown>) {
  const present = COLUMNS.filter((column) => body[column] !== undefined);
  const values = present.map((column) => (column === 'internal_flags' ? JSON.stringify(body[column]) : body[column]));
  const placeholders = present.map((_, index) => `$${index + 3}`);
  return {
    text: `insert into tight_customers (company_id, uuid, ${present.join(', ')}) values ($1, $2, ${placeholders.join(', ')}) returning *`,
    values: [companyId, crypto.randomUUID(), ...values],
  };
}

app.post('/customers', async (request) => {
  const { rows } = await pool.query(insertOf(request.body as Record<string, unknown>));
  return rows[0];
});

app.post('/customers/with-event', async (request) => {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query(insertOf(request.body as Record<string, unknown>));
    const customer = rows[0];
    await client.query(
      `insert into tight_events (company_id, uuid, type, object_type, object_uuid, data) values ($1, $2, 'customer.created', 'customer', $3, $4)`,
      [companyId, crypto.randomUUID(), customer.uuid, JSON.stringify({ object: customer })],
    );
    await client.query('commit');
    return customer;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
});

await app.listen({ host: '127.0.0.1', port: Number(env.PORT) });
process.on('SIGTERM', () => void app.close().then(() => pool.end()).then(() => process.exit(0)));
