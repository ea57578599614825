/**
 * The benchmark scenarios: what each sends to the API, and for W1-W4 the SQL the service runs for it,
 * replayed through pg directly as the database's own speed.
 */
import type { AutocannonRequest } from 'autocannon';
import type pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { JOB_STATUSES, LAST_NAMES } from './seed.js';
import { withWebhookEndpoint } from './webhook-deliveries.js';

export interface BenchContext {
  apiKey: string;
  companyId: string;
  /** Customer uuids of the large company, a fixed sample. */
  customers: string[];
  /** Jobs of the large company with their customer, a fixed sample. */
  jobs: Array<{ uuid: string; customer: string }>;
  bigInvoiceUuid: string;
  /** E1's `after` values: event uuids of the large company at random positions of its feed (not the last page). */
  feedAfter: string[];
  /** V1, V2 and A1's company: 50 technicians and 100,000 visits over two years (seed.ts, ensureSchedule). */
  schedule?: {
    apiKey: string;
    companyId: string;
    technicians: string[];
    jobs: string[];
    /** The seeded visits' span, ISO timestamps. */
    from: string;
    to: string;
  };
}

/** Where a scenario runs, for one that prepares something first (W3H's webhook endpoint). */
export interface ScenarioTarget {
  url: string;
  databaseUrl: string;
  log: (line: string) => void;
}

export interface SqlBaseline {
  /** One unit of work: the queries the service runs for one request. */
  run(pool: pg.Pool): Promise<void>;
}

export interface Scenario {
  id: string;
  title: string;
  /** What the scenario measures (bench/README.md repeats it). */
  measures: string;
  /** The request; setupRequest varies ids and bodies per request. */
  request: AutocannonRequest;
  sql?: SqlBaseline;
  /** Runs before the warm-up; its teardown runs after the measured run and answers a line for the report. */
  setup?: (target: ScenarioTarget) => Promise<{ teardown(): Promise<string> }>;
  /**
   * 'no-worker': runs on a second server started with WEBHOOK_WORKER_ENABLED=false, after the main server's
   * scenarios, so that a write that enqueues deliveries is measured without the delivery work beside it.
   * 'tight': runs on the reference server (bench/tight-server.ts), the yardstick of W1, W2 and W5.
   */
  server?: 'no-worker' | 'tight';
  /**
   * A reference scenario's counterpart on this API: it runs right after it, so that the pair compared by a mark is
   * measured minutes apart at most, not one at each end of a run on a host whose speed drifts.
   */
  after?: string;
}

const pickOne = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)];
const randomPage = () => 1 + Math.floor(Math.random() * 10);
const today = () => new Date().toISOString().slice(0, 10);
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

const json = (body: unknown) => JSON.stringify(body);
const JSON_HEADERS = { 'content-type': 'application/json' };

/** Five line items, as a client would send them. */
function lineItems() {
  return [
    { description: 'Diagnostic', quantity: 1, unit_price: 89, tax_rate: 8.25 },
    { description: 'Labor (hours)', quantity: 2.5, unit_price: 120, tax_rate: 8.25 },
    { description: 'Capacitor', quantity: 1, unit_price: 42.5, tax_rate: 8.25 },
    { description: 'Refrigerant (lb)', quantity: 3, unit_price: 65.75, tax_rate: 0 },
    { description: 'Trip charge', unit_price: 35 },
  ];
}

/**
 * A valid 2 MiB JPEG as far as content sniffing goes: SOI, a JFIF APP0 segment, filler bytes, EOI.
 * The filler is deterministic pseudo-random data (like compressed image data, it does not compress).
 */
export function benchJpeg(size = 2 * 1024 * 1024): Buffer {
  const head = Buffer.from([
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x00,
  ]);
  const buffer = Buffer.alloc(size);
  head.copy(buffer, 0);
  let state = 0x2545f491;
  for (let offset = head.length; offset < size - 2; offset++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    // Keep 0xFF out of the filler so no marker appears before EOI.
    buffer[offset] = (state >>> 0) % 255;
  }
  buffer[size - 2] = 0xff;
  buffer[size - 1] = 0xd9;
  return buffer;
}

function multipartPhoto(jpeg: Buffer) {
  const boundary = '----crm-bench-7MA4YWxkTrZu0gW';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="photo_type"\r\n\r\nbefore\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="photos"; filename="bench.jpg"\r\n` +
        'Content-Type: image/jpeg\r\n\r\n',
    ),
    jpeg,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

// The SQL of the customers list (W1, W4): what the service's repository sends through drizzle.
const CUSTOMER_PAGE = `select * from customers where company_id = $1 and deleted_at is null
  order by created_at desc, uuid desc limit $2 offset $3`;
const CUSTOMER_TOTAL = `select coalesce(sum(live), 0) as live, coalesce(sum(deleted), 0) as deleted
  from record_counts where company_id = $1 and table_name = 'customers'`;
const CUSTOMER_SEARCH_PAGE = `select * from customers where company_id = $1 and deleted_at is null and search_text like $2
  order by created_at + interval '0 seconds' desc, uuid desc limit $3 offset $4`;
const CUSTOMER_SEARCH_TOTAL = `select count(*) from customers where company_id = $1 and deleted_at is null and search_text like $2`;
const CUSTOMER_GET = `select * from customers where company_id = $1 and deleted_at is null and uuid = $2 limit 1`;
// E1: the one statement the events service sends for a feed page after an event: the event's position,
// the next 101 events from the feed index, and the page as one JSON array text (eventJsonSql).
const FEED_PAGE_AFTER = `with after_event as (select txid, seq, created_at from events where company_id = $1 and uuid = $2)
  select a.created_at, count(p.event_json) as rows, string_agg(p.event_json, ',' order by p.row_number) filter (where p.row_number <= $3) as events
  from after_event a left join lateral (
    select row_number() over (order by txid, seq) as row_number,
      ('{"uuid":"' || uuid || '","type":"' || type || '","object_type":"' || object_type || '","object_uuid":"' || object_uuid
        || '","created_at":"' || to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '","data":' || data::text || '}') as event_json
    from events where company_id = $1 and txid < pg_snapshot_xmin(pg_current_snapshot()) and (txid, seq) > (a.txid, a.seq)
    order by txid, seq limit $3 + 1) p on true
  group by a.created_at`;
const CUSTOMER_INSERT = `insert into customers (company_id, uuid, first_name, last_name, email, phone)
  values ($1, $2, $3, $4, $5, $6) returning *`;

let created = 0;
function newCustomer() {
  created += 1;
  const n = `${process.pid}${created}`;
  return { first_name: 'Bench', last_name: `Customer${n}`, email: `bench${n}@example.com`, phone: '555-010-0199' };
}

/** Everything a real client sends for a new customer: contact, type, VIP, physical address, notes, flags. */
function fullCustomer() {
  const base = newCustomer();
  return {
    ...base,
    company_name: null,
    customer_type: 'Residential',
    is_vip: created % 10 === 0,
    physical_address1: '1200 Barton Springs Rd',
    physical_address2: 'Unit 4',
    physical_city: 'Austin',
    physical_state: 'TX',
    physical_zip: '78704',
    notes: 'Gate code 4411. Dog in the back yard; call before arriving.',
    internal_flags: { source: 'web', referral: 'neighbor', priority: 2 },
    on_my_way_notify_via: 'sms',
  };
}

export function buildScenarios(ctx: BenchContext): Scenario[] {
  const auth = { authorization: `Bearer ${ctx.apiKey}` };
  const company = ctx.companyId;
  const photo = multipartPhoto(benchJpeg());
  /** W3 and its webhook variants: the same create. */
  const customerCreate: Scenario['request'] = {
    method: 'POST',
    headers: { ...auth, ...JSON_HEADERS },
    setupRequest: (req) => ({ ...req, path: '/api/v1/customers', body: json(newCustomer()) }),
  };

  return [
    {
      id: 'W1',
      title: 'customers list (page of 50 + total)',
      measures:
        'GET /api/v1/customers?page=P&limit=50 with P random in 1..10 on the large company: a page ordered by ' +
        'created_at desc, uuid desc and the exact total.',
      request: {
        method: 'GET',
        headers: auth,
        setupRequest: (req) => ({ ...req, path: `/api/v1/customers?page=${randomPage()}&limit=50` }),
      },
      sql: {
        async run(pool) {
          await pool.query(CUSTOMER_PAGE, [company, 50, (randomPage() - 1) * 50]);
          await pool.query(CUSTOMER_TOTAL, [company]);
        },
      },
    },
    {
      id: 'E1',
      title: 'events feed page (limit 100, after a random event)',
      measures:
        'GET /api/v1/events?after=<uuid>&limit=100 on the large company (BENCH_EVENTS events, 100,000 by default), ' +
        'after an event at a random position of the feed.',
      request: {
        method: 'GET',
        headers: auth,
        setupRequest: (req) => ({ ...req, path: `/api/v1/events?after=${pickOne(ctx.feedAfter)}&limit=100` }),
      },
      sql: {
        async run(pool) {
          await pool.query(FEED_PAGE_AFTER, [company, pickOne(ctx.feedAfter), 100]);
        },
      },
    },
    {
      id: 'E2',
      title: 'events feed page (limit 50, after a random event)',
      measures: 'E1 with limit=50: the page size of W1, so about the same bytes per response as a W1 page.',
      request: {
        method: 'GET',
        headers: auth,
        setupRequest: (req) => ({ ...req, path: `/api/v1/events?after=${pickOne(ctx.feedAfter)}&limit=50` }),
      },
    },
    {
      id: 'W2',
      title: 'customer get by uuid',
      measures: 'GET /api/v1/customers/{uuid} for a random customer of the large company (a fixed sample of ids).',
      request: {
        method: 'GET',
        headers: auth,
        setupRequest: (req) => ({ ...req, path: `/api/v1/customers/${pickOne(ctx.customers)}` }),
      },
      sql: {
        async run(pool) {
          await pool.query(CUSTOMER_GET, [company, pickOne(ctx.customers)]);
        },
      },
    },
    {
      id: 'W3',
      title: 'customer create',
      measures: 'POST /api/v1/customers with first_name, last_name, email, phone.',
      request: customerCreate,
      sql: {
        async run(pool) {
          const c = newCustomer();
          await pool.query(CUSTOMER_INSERT, [company, uuidv7(), c.first_name, c.last_name, c.email, c.phone]);
        },
      },
    },
    {
      id: 'W5',
      // Before W3H, whose deliveries and their clean-up would weigh on the create measured after it.
      title: 'customer create, full body',
      measures:
        'POST /api/v1/customers with the body a real client sends: name, email, phone, type, VIP, physical address, ' +
        'notes, internal_flags and on_my_way_notify_via.',
      request: {
        method: 'POST',
        headers: { ...auth, ...JSON_HEADERS },
        setupRequest: (req) => ({ ...req, path: '/api/v1/customers', body: json(fullCustomer()) }),
      },
    },
    {
      id: 'W3H',
      title: 'customer create, one webhook endpoint ("*")',
      measures:
        'W3 with one enabled webhook endpoint subscribed to "*" on a local receiver that answers 204 at once: every ' +
        'create also writes its pending delivery, and the server delivers them during the run.',
      request: customerCreate,
      setup: (target) => withWebhookEndpoint({ ...target, apiKey: ctx.apiKey, companyId: company, id: 'W3H', delivering: true }),
    },
    {
      id: 'W3N',
      title: 'customer create, webhook worker off',
      measures: 'W3 on a second server started with WEBHOOK_WORKER_ENABLED=false, no webhook endpoint: the reference of W3Q.',
      server: 'no-worker',
      request: customerCreate,
    },
    {
      id: 'W3Q',
      title: 'customer create, one webhook endpoint ("*"), worker off',
      measures:
        'W3N with one enabled endpoint subscribed to "*": every create writes its event and its pending delivery in ' +
        'its transaction (the write cost of webhooks); nothing is delivered, the pending rows are removed afterwards.',
      server: 'no-worker',
      request: customerCreate,
      setup: (target) => withWebhookEndpoint({ ...target, apiKey: ctx.apiKey, companyId: company, id: 'W3Q', delivering: false }),
    },
    {
      id: 'T1',
      title: 'reference server: customers list (page of 50 + count)',
      measures:
        'W1 on the reference server (bench/tight-server.ts: Fastify + node-postgres, plain SQL, no auth, no validation) ' +
        'over a copy of the customers with one index (the list order): the yardstick of W1 (mark: W1 >= 5x T1).',
      server: 'tight',
      after: 'W1',
      request: { method: 'GET', setupRequest: (req) => ({ ...req, path: `/customers?page=${randomPage()}&limit=50` }) },
    },
    {
      id: 'T5',
      title: 'reference server: customer create, full body',
      measures: 'W5 on the reference server: one INSERT ... RETURNING *, no trigger, no event (mark: W5 >= 0.8x T5).',
      server: 'tight',
      after: 'W5',
      request: {
        method: 'POST',
        headers: JSON_HEADERS,
        setupRequest: (req) => ({ ...req, path: '/customers', body: json(fullCustomer()) }),
      },
    },
    {
      id: 'T5E',
      title: 'reference server: customer create, full body, with its event',
      measures:
        'T5 with what DECISIONS §9.1 asks of every create: in one transaction, the insert and an event row carrying the ' +
        'customer (BEGIN, INSERT, INSERT, COMMIT; tight_events has the events indexes). Not a mark: what the event costs ' +
        'the reference server itself.',
      server: 'tight',
      after: 'W5',
      request: {
        method: 'POST',
        headers: JSON_HEADERS,
        setupRequest: (req) => ({ ...req, path: '/customers/with-event', body: json(fullCustomer()) }),
      },
    },
    {
      id: 'T2',
      title: 'reference server: customer get by uuid',
      measures:
        'W2 on the reference server: one SELECT by primary key of the customers table W2 reads, a named prepared ' +
        'statement. In the cluster comparison, ' +
        'three reference servers behind the same HAProxy and PgBouncer (unnamed statements), beside one: what the ' +
        'deployment itself costs on this machine.',
      server: 'tight',
      after: 'W2',
      request: { method: 'GET', setupRequest: (req) => ({ ...req, path: `/customers/${pickOne(ctx.customers)}` }) },
    },
    {
      id: 'W4',
      title: 'customer search (ILIKE %term%, pg_trgm)',
      measures:
        'GET /api/v1/customers?search=<last name>&limit=50: a substring search over the trigram-indexed ' +
        'search_text (each term matches about 1% of the customers), a page and the exact count.',
      request: {
        method: 'GET',
        headers: auth,
        setupRequest: (req) => ({ ...req, path: `/api/v1/customers?search=${pickOne(LAST_NAMES).toLowerCase()}&limit=50` }),
      },
      sql: {
        async run(pool) {
          const pattern = `%${pickOne(LAST_NAMES).toLowerCase()}%`;
          await pool.query(CUSTOMER_SEARCH_PAGE, [company, pattern, 50, 0]);
          await pool.query(CUSTOMER_SEARCH_TOTAL, [company, pattern]);
        },
      },
    },
    {
      id: 'J1',
      title: 'jobs list by status (+ customer)',
      measures: 'GET /api/v1/jobs?status=S&limit=50 with S a random job status: a page of jobs with the embedded customer and the total.',
      request: {
        method: 'GET',
        headers: auth,
        setupRequest: (req) => ({ ...req, path: `/api/v1/jobs?status=${encodeURIComponent(pickOne(JOB_STATUSES))}&limit=50` }),
      },
    },
    {
      id: 'J2',
      title: 'job get (+ customer, location, user)',
      measures: 'GET /api/v1/jobs/{uuid} for a random job: the job with its customer, location and assigned user.',
      request: {
        method: 'GET',
        headers: auth,
        setupRequest: (req) => ({ ...req, path: `/api/v1/jobs/${pickOne(ctx.jobs).uuid}` }),
      },
    },
    {
      id: 'I1',
      title: 'invoice create (5 items, numbering)',
      measures:
        'POST /api/v1/invoices for a random job with 5 line items: every request takes the next number from the ' +
        "company's one invoice counter row (numbering under contention) and moves the job to Invoiced.",
      request: {
        method: 'POST',
        headers: { ...auth, ...JSON_HEADERS },
        setupRequest: (req) => {
          const job = pickOne(ctx.jobs);
          return {
            ...req,
            path: '/api/v1/invoices',
            body: json({ job_uuid: job.uuid, customer_uuid: job.customer, due_date: inDays(30), line_items: lineItems() }),
          };
        },
      },
    },
    {
      id: 'I2',
      title: 'invoice preview (5 items)',
      measures: 'POST /api/v1/invoices/preview with 5 line items: validation and money arithmetic, no write.',
      request: {
        method: 'POST',
        path: '/api/v1/invoices/preview',
        headers: { ...auth, ...JSON_HEADERS },
        body: json({ line_items: lineItems() }),
      },
    },
    {
      id: 'P1',
      title: 'payment create (invoice row lock)',
      measures:
        'POST /api/v1/payments of 1.00 cash, all against one invoice with a 9,999,999.00 balance: every request ' +
        'locks the same invoice row, so this measures the serialized settlement path.',
      request: {
        method: 'POST',
        headers: { ...auth, ...JSON_HEADERS },
        setupRequest: (req) => ({
          ...req,
          path: '/api/v1/payments',
          body: json({ invoice_uuid: ctx.bigInvoiceUuid, payment_type: 'cash', amount: 1, payment_date: today() }),
        }),
      },
    },
    ...scheduleScenarios(ctx),
    {
      id: 'U1',
      title: 'photo upload (2 MiB JPEG)',
      measures:
        'POST /api/v1/jobs/{uuid}/photos, multipart/form-data with one 2 MiB JPEG in `photos` and photo_type=before, ' +
        'for a random job; the file is sniffed and streamed to local storage.',
      request: {
        method: 'POST',
        headers: { ...auth, 'content-type': photo.contentType },
        body: photo.body,
        setupRequest: (req) => ({ ...req, path: `/api/v1/jobs/${pickOne(ctx.jobs).uuid}/photos` }),
      },
    },
  ];
}

const WEEK_MS = 7 * 86_400_000;

/** Two different technicians, at random. */
function twoOf<T>(values: readonly T[]): [T, T] {
  const first = Math.floor(Math.random() * values.length);
  const second = (first + 1 + Math.floor(Math.random() * (values.length - 1))) % values.length;
  return [values[first], values[second]];
}

/** V1, V2 and A1 (DECISIONS §13) on the schedule company; none when it is not seeded. */
function scheduleScenarios(ctx: BenchContext): Scenario[] {
  const schedule = ctx.schedule;
  if (!schedule) return [];
  const auth = { authorization: `Bearer ${schedule.apiKey}` };
  const span = { from: Date.parse(schedule.from), to: Date.parse(schedule.to) };
  /** The start of a random week inside the seeded span. */
  const randomWeek = () => new Date(span.from + Math.floor(Math.random() * ((span.to - span.from - WEEK_MS) / 86_400_000)) * 86_400_000);
  // V2's visits: one hour each, one after another after everything booked so far, so none clashes.
  let base = 0;
  let next = 0;
  return [
    {
      id: 'V1',
      title: "one technician's week of visits",
      measures:
        'GET /api/v1/visits?assigned_user_id=..&from=..&to=..&sort=starts_at: a random technician and a random week of the ' +
        "schedule company (50 technicians, 100,000 visits over two years, about 19 visits in a technician's week).",
      request: {
        method: 'GET',
        headers: auth,
        setupRequest: (req) => {
          const from = randomWeek();
          const to = new Date(from.getTime() + WEEK_MS);
          return {
            ...req,
            path: `/api/v1/visits?assigned_user_id=${pickOne(schedule.technicians)}&from=${from.toISOString()}&to=${to.toISOString()}&sort=starts_at`,
          };
        },
      },
    },
    {
      id: 'V2',
      title: 'visit create with two technicians',
      measures:
        'POST /api/v1/visits for a random job with two random technicians, one hour, after every visit booked so far: the ' +
        'job lock, the users check, the visit, two holds through the exclusion constraint (the conflict check) and the event.',
      setup: async (target) => {
        const client = new (await import('pg')).default.Client({ connectionString: target.databaseUrl });
        await client.connect();
        try {
          const { rows } = await client.query<{ last: Date | null }>('select max(ends_at) as last from visits where company_id = $1', [schedule.companyId]);
          base = Math.max(rows[0].last?.getTime() ?? 0, span.to) + 3_600_000;
          next = 0;
        } finally {
          await client.end();
        }
        return { teardown: async () => `${next} visits booked` };
      },
      request: {
        method: 'POST',
        headers: { ...auth, ...JSON_HEADERS },
        setupRequest: (req) => {
          const start = base + next++ * 3_600_000;
          return {
            ...req,
            path: '/api/v1/visits',
            body: json({
              job_uuid: pickOne(schedule.jobs),
              starts_at: new Date(start).toISOString(),
              ends_at: new Date(start + 3_600_000).toISOString(),
              assigned_user_ids: twoOf(schedule.technicians),
            }),
          };
        },
      },
    },
    {
      id: 'A1',
      title: 'availability of 10 technicians over 7 days',
      measures: 'GET /api/v1/availability for 10 random technicians over a random week (duration_minutes=60, default hours and zone).',
      request: {
        method: 'GET',
        headers: auth,
        setupRequest: (req) => {
          const from = randomWeek();
          const to = new Date(from.getTime() + WEEK_MS);
          const users = [...schedule.technicians].sort(() => Math.random() - 0.5).slice(0, 10);
          return {
            ...req,
            path: `/api/v1/availability?from=${from.toISOString()}&to=${to.toISOString()}&duration_minutes=60&user_ids=${users.join(',')}`,
          };
        },
      },
    },
  ];
}
