/**
 * The reference server of the throughput marks ("tight"): Fastify and node-postgres with plain SQL, no auth,
 * no validation, no events. Started by `npm run bench` for T1 and T5; never part of the API.
 *   GET  /customers?page=P&limit=L   a page of the company's live customers, newest first, and count(*)
 *   POST /customers                  inserts the JSON body's fields and answers the row
 * Its table, tight_customers, is a copy of the seeded customers with one index, the list order, and no
 * trigger (bench/run.ts makes it). Environment: DATABASE_URL, PORT, COMPANY_ID (the large company).
 */
import Fastify from 'fastify';
import pg from 'pg';

const env = process.env;
const companyId = env.COMPANY_ID!;
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 32 });
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

app.post('/customers', async (request) => {
  const body = request.body as Record<string, unknown>;
  const present = COLUMNS.filter((column) => body[column] !== undefined);
  const values = present.map((column) => (column === 'internal_flags' ? JSON.stringify(body[column]) : body[column]));
  const placeholders = present.map((_, index) => `$${index + 3}`);
  const { rows } = await pool.query(
    `insert into tight_customers (company_id, uuid, ${present.join(', ')}) values ($1, $2, ${placeholders.join(', ')}) returning *`,
    [companyId, crypto.randomUUID(), ...values],
  );
  return rows[0];
});

await app.listen({ host: '127.0.0.1', port: Number(env.PORT) });
process.on('SIGTERM', () => void app.close().then(() => pool.end()).then(() => process.exit(0)));
