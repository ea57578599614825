/**
 * Deterministic benchmark seed: one large company plus 49 smaller ones, written with set-based SQL
 * (INSERT ... SELECT generate_series) into a dedicated database.
 *
 * Ids are UUIDv7-shaped and derived from the row index: the first 48 bits are a fixed base timestamp
 * plus the index times a step (so created_at ascends with the index and matches the id), the rest comes
 * from md5(tag:index). The same sizes give the same ids, numbers and amounts on every run; only the
 * company uuids and API keys (made by createCompany) differ between reseeds.
 */
import pg from 'pg';
import { createDatabase, type Database } from '../src/db/client.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { createCompany } from '../src/modules/admin/provisioning.service.js';

/** Bump when the seed's content changes, so an old bench database is reseeded. */
const SEED_VERSION = 1;

/** 2024-01-01T00:00:00Z: every seeded id and created_at starts here. */
const BASE_MS = 1_704_067_200_000;

export interface SeedSize {
  /** Customers of the large company; jobs, estimates, invoices, payments and photos scale with it. */
  customers: number;
  /** Customers of the 49 smaller companies, all together. */
  otherCustomers: number;
  /** Number of smaller companies. */
  otherCompanies: number;
  /** The customer count the large company's jobs, estimates, invoices, payments and photos scale with. */
  relatedOf: number;
}

export interface SeedCounts {
  customers: number;
  jobs: number;
  estimates: number;
  invoices: number;
  payments: number;
  photos: number;
}

export interface SeedInfo {
  size: SeedSize;
  counts: SeedCounts;
  companyUuid: string;
  userId: string;
  apiKey: string;
  /** A Pending invoice with a total of 9,999,999.00, for the payment scenario. */
  bigInvoiceUuid: string;
  seedSeconds: number;
  seededAt: string;
}

export function countsFor(customers: number, relatedOf = customers): SeedCounts {
  return {
    customers,
    jobs: relatedOf * 2,
    estimates: Math.floor(relatedOf / 2),
    invoices: relatedOf,
    payments: Math.floor((relatedOf * 4) / 5),
    photos: Math.floor(relatedOf / 5),
  };
}

export function sizeFromEnv(env: NodeJS.ProcessEnv = process.env): SeedSize {
  const int = (name: string, fallback: number, min: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw.replace(/_/g, ''));
    if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got '${raw}'`);
    return value;
  };
  const customers = int('BENCH_CUSTOMERS', 100_000, 100);
  return {
    customers,
    otherCustomers: int('BENCH_OTHER_CUSTOMERS', 400_000, 0),
    otherCompanies: int('BENCH_OTHER_COMPANIES', 49, 0),
    relatedOf: Math.min(customers, int('BENCH_RELATED_OF', customers, 100)),
  };
}

/** Database URL of the bench database, and of a maintenance database on the same server. */
export function benchUrls(env: NodeJS.ProcessEnv = process.env): { bench: string; admin: string; name: string } {
  const explicit = env.BENCH_DATABASE_URL;
  const base = new URL(env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  const bench = new URL(explicit || base.toString());
  if (!explicit) bench.pathname = `/${env.BENCH_DATABASE || 'crm_bench'}`;
  const admin = new URL(bench.toString());
  admin.pathname = '/postgres';
  return { bench: bench.toString(), admin: admin.toString(), name: decodeURIComponent(bench.pathname.slice(1)) };
}

const sameSize = (a: SeedSize, b: SeedSize) =>
  a.customers === b.customers &&
  a.otherCustomers === b.otherCustomers &&
  a.otherCompanies === b.otherCompanies &&
  (a.relatedOf ?? a.customers) === (b.relatedOf ?? b.customers);

/** The seed info when the bench database holds this size already (and BENCH_RESEED is not set). */
async function existingSeed(urls: ReturnType<typeof benchUrls>, size: SeedSize): Promise<SeedInfo | null> {
  const client = new pg.Client({ connectionString: urls.bench });
  try {
    await client.connect();
  } catch {
    return null;
  }
  try {
    const { rows } = await client.query<{ version: number; info: SeedInfo }>(
      'select version, info from bench_seed where id = 1',
    );
    const row = rows[0];
    if (!row || row.version !== SEED_VERSION || !sameSize(row.info.size, size)) return null;
    // The key must still work: the company must exist.
    const company = await client.query('select 1 from companies where uuid = $1', [row.info.companyUuid]);
    return company.rowCount ? row.info : null;
  } catch {
    return null;
  } finally {
    await client.end();
  }
}

async function recreateDatabase(urls: ReturnType<typeof benchUrls>) {
  const admin = new pg.Client({ connectionString: urls.admin });
  await admin.connect();
  try {
    const ident = `"${urls.name.replace(/"/g, '""')}"`;
    await admin.query(`drop database if exists ${ident} with (force)`);
    await admin.query(`create database ${ident}`);
  } finally {
    await admin.end();
  }
}

/** SQL for the uuid of row `i` of a seeded table (tag, i and ms are SQL expressions); see the file comment. */
function idSql(tag: string, i: string, ms: string): string {
  return `pg_temp.bench_id(${tag}, ${i}, ${ms})`;
}

/** created_at / id timestamp (ms) of row i of a table: base + offset + i * step. */
function msSql(offset: number, step: number, i: string): string {
  return `(${BASE_MS + offset}::bigint + (${i})::bigint * ${step})`;
}

// One step per table, so that every table's rows span the same period (customers * 30 s).
const STEP = { customers: 30_000, jobs: 15_000, estimates: 60_000, invoices: 30_000, payments: 37_500, photos: 150_000 };
const OFFSET = { customers: 0, jobs: 1_000, estimates: 2_000, invoices: 3_000, payments: 4_000, photos: 5_000, misc: 0 };

/** Expressions for the id and created_at of row i of a seeded table of company k. */
function row(table: keyof typeof STEP, k: string | number, i: string) {
  const ms = msSql(OFFSET[table], STEP[table], i);
  return { id: idSql(`'${table}:${k}'`, i, ms), at: `to_timestamp(${ms} / 1000.0)` };
}

const FIRST_NAMES = [
  'James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth',
  'William', 'Barbara', 'Richard', 'Susan', 'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Charles', 'Karen',
  'Christopher', 'Lisa', 'Daniel', 'Nancy', 'Matthew', 'Betty', 'Anthony', 'Margaret', 'Mark', 'Sandra',
  'Donald', 'Ashley', 'Steven', 'Kimberly', 'Paul', 'Emily', 'Andrew', 'Donna', 'Joshua', 'Michelle',
  'Kenneth', 'Carol', 'Kevin', 'Amanda', 'Brian', 'Dorothy', 'George', 'Melissa', 'Timothy', 'Deborah',
];
/** Also the search terms of W4: each matches about 1% of a company's customers. */
export const LAST_NAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez',
  'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin',
  'Lee', 'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson',
  'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores',
  'Green', 'Adams', 'Nelson', 'Baker', 'Hall', 'Rivera', 'Campbell', 'Mitchell', 'Carter', 'Roberts',
  'Gomez', 'Phillips', 'Evans', 'Turner', 'Diaz', 'Parker', 'Cruz', 'Edwards', 'Collins', 'Reyes',
  'Stewart', 'Morris', 'Morales', 'Murphy', 'Cook', 'Rogers', 'Gutierrez', 'Ortiz', 'Morgan', 'Cooper',
  'Peterson', 'Bailey', 'Reed', 'Kelly', 'Howard', 'Ramos', 'Kim', 'Cox', 'Ward', 'Richardson',
  'Watson', 'Brooks', 'Chavez', 'Wood', 'James', 'Bennett', 'Gray', 'Mendoza', 'Ruiz', 'Hughes',
  'Price', 'Alvarez', 'Castillo', 'Sanders', 'Patel', 'Myers', 'Long', 'Ross', 'Foster', 'Jimenez',
];
const CITIES = ['Austin', 'Denver', 'Portland', 'Phoenix', 'Raleigh', 'Columbus', 'Tampa', 'Boise'];
const STATES = ['TX', 'CO', 'OR', 'AZ', 'NC', 'OH', 'FL', 'ID'];
const JOB_TITLES = [
  'AC not cooling', 'Furnace tune-up', 'Water heater replacement', 'Leaking faucet', 'Panel upgrade',
  'Duct cleaning', 'Thermostat install', 'Drain clog', 'Outlet not working', 'Annual maintenance',
];
export const JOB_STATUSES = [
  'New', 'Contacted', 'Scheduled', 'In Progress', 'Needs Approval', 'Ready to Invoice', 'Invoiced',
  'Complete', 'Estimate Sent', 'Estimate Approved',
];
const PRIORITIES = ['Low', 'Normal', 'Normal', 'Normal', 'High', 'Emergency'];
const ESTIMATE_STATUSES = ['Pending', 'Accepted', 'Declined', 'Expired'];
const PHOTO_TYPES = ['before', 'during', 'after'];

const arr = (values: string[]) => `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',')}]::text[]`;
/** values[i mod n] in SQL (1-based arrays). */
const pick = (values: string[], i: string) => `(${arr(values)})[((${i}) % ${values.length}) + 1]`;

const FUNCTIONS = `
create function pg_temp.bench_id(tag text, i bigint, ms bigint) returns uuid language sql immutable as $$
  select (lpad(to_hex(ms), 12, '0') || '7' || substr(md5(tag || ':' || i), 1, 3)
          || substr('89ab', (i % 4)::int + 1, 1) || substr(md5(tag || ':' || i), 5, 15))::uuid
$$;
create function pg_temp.bench_phone(i bigint) returns text language sql immutable as $$
  select lpad(((200 + i % 700))::text, 3, '0') || '-' || lpad(((i / 7) % 1000)::text, 3, '0') || '-' || lpad((i % 10000)::text, 4, '0')
$$;
`;

/** Customers of company `k` (uuid in $1), rows 1..n. */
function customersSql(k: number, companyParam: string, lo: string, hi: string, series = 'i') {
  const r = row('customers', k, series);
  const first = pick(FIRST_NAMES, series);
  const last = pick(LAST_NAMES, `${series} / ${FIRST_NAMES.length}`);
  return `
    select ${companyParam}, ${r.id}, ${first}, ${last},
      case when ${series} % 5 = 0 then ${last} || ' ' || ${pick(['Holdings', 'LLC', 'Properties', 'Inc', 'Group'], series)} end,
      lower(${first} || '.' || ${last} || ${series} || '@example.com'),
      pg_temp.bench_phone(${series}),
      case when ${series} % 5 = 0 then 'Commercial' else 'Residential' end,
      ${series} % 20 = 0,
      (${series} % 9000 + 100) || ' ' || ${pick(['Main St', 'Oak Ave', 'Pine Rd', 'Maple Dr', 'Cedar Ln'], series)},
      ${pick(CITIES, series)}, ${pick(STATES, series)}, lpad(((${series} * 37) % 100000)::text, 5, '0'),
      ${r.at}, ${r.at}
    from generate_series(${lo}, ${hi}) as ${series}`;
}

const CUSTOMER_COLUMNS = `company_id, uuid, first_name, last_name, company_name, email, phone, customer_type, is_vip,
  physical_address1, physical_city, physical_state, physical_zip, created_at, updated_at`;

/** Customer index (1..N) of job j: a fixed permutation so a customer's jobs are spread out. */
const customerOfJob = (j: string, n: number) => `((((${j})::bigint * 7919) % ${n}) + 1)`;

/**
 * Rows per INSERT statement (each its own transaction). The record_counts trigger upserts one counter row
 * per inserted row; inside one transaction those updates pile up versions of the same row and the cost
 * grows with the square of the batch, so big tables go in small autocommitted batches.
 */
const BATCH = Number(process.env.BENCH_SEED_BATCH || 250);

function log(label: string, rows: number | string, seconds: number) {
  process.stdout.write(`  ${label.padEnd(36)} ${String(rows).padStart(9)} rows  ${seconds.toFixed(1).padStart(6)} s\n`);
}

async function step(client: pg.PoolClient, label: string, sqlText: string, params: unknown[] = []) {
  const started = performance.now();
  const result = await client.query(sqlText, params);
  log(label, result.rowCount ?? '', (performance.now() - started) / 1000);
}

/** Runs sqlFor(lo, hi) for consecutive ranges of at most BATCH of 1..total. */
async function batched(
  client: pg.PoolClient,
  label: string,
  total: number,
  sqlFor: (lo: number, hi: number) => string,
  params: unknown[] = [],
) {
  const started = performance.now();
  let rows = 0;
  for (let lo = 1; lo <= total; lo += BATCH) {
    const result = await client.query(sqlFor(lo, Math.min(total, lo + BATCH - 1)), params);
    rows += result.rowCount ?? 0;
  }
  log(label, rows, (performance.now() - started) / 1000);
}

async function seedLarge(client: pg.PoolClient, companyId: string, userId: string, size: SeedSize) {
  const n = size.customers;
  const c = countsFor(n, size.relatedOf);
  const K = 0;
  const p = [companyId];

  // Users (technicians) and locations.
  await step(
    client,
    'users',
    `insert into users (company_id, id, first_name, last_name, email, created_at, updated_at)
     select $1, ${row('customers', 'user', 'i').id}, ${pick(FIRST_NAMES, 'i')}, ${pick(LAST_NAMES, 'i')},
       'tech' || i || '@bench.example.com', now(), now()
     from generate_series(1, 10) i`,
    p,
  );
  await step(
    client,
    'locations',
    `insert into locations (company_id, uuid, name, address1, city, state, zip, phone, timezone, is_primary, created_at, updated_at)
     select $1, ${row('customers', 'loc', 'i').id}, 'Branch ' || i, (100 + i) || ' Depot Rd', ${pick(CITIES, 'i')},
       ${pick(STATES, 'i')}, lpad((i * 11111)::text, 5, '0'), pg_temp.bench_phone(i), 'America/Chicago', i = 1,
       to_timestamp(${BASE_MS} / 1000.0), to_timestamp(${BASE_MS} / 1000.0)
     from generate_series(1, 3) i`,
    p,
  );
  await batched(client, 'customers (large company)', n, (lo, hi) =>
    `insert into customers (${CUSTOMER_COLUMNS}) ${customersSql(K, '$1', String(lo), String(hi))}`, p);

  const job = row('jobs', K, 'i');
  const jobCustomer = row('customers', K, customerOfJob('i', n)).id;
  const status = pick(JOB_STATUSES, 'i');
  await batched(client, 'jobs', c.jobs, (lo, hi) =>
    `insert into jobs (company_id, uuid, job_number, customer_uuid, location_uuid, assigned_to_user_id, title, description,
       status, priority, is_urgent, service_address1, service_city, service_state, service_zip, estimated_amount,
       scheduled_date, scheduled_time_start, scheduled_time_end, started_at, completed_at, invoiced_at, created_at, updated_at)
     select $1, ${job.id}, 'J-' || i, ${jobCustomer},
       ${row('customers', 'loc', '(i % 3) + 1').id},
       case when i % 4 = 0 then null else ${row('customers', 'user', '(i % 10) + 1').id} end,
       ${pick(JOB_TITLES, 'i')}, 'Customer reports: ' || lower(${pick(JOB_TITLES, 'i / 10')}) || ' (ticket ' || i || ')',
       ${status}, ${pick(PRIORITIES, 'i')}, i % 17 = 0,
       (i % 9000 + 100) || ' Service Way', ${pick(CITIES, 'i')}, ${pick(STATES, 'i')}, lpad(((i * 53) % 100000)::text, 5, '0'),
       (100 + (i % 900))::numeric(12,2),
       (${job.at})::date + 7, '09:00', '11:00',
       case when ${status} in ('In Progress', 'Invoiced', 'Complete') then ${job.at} + interval '8 days' end,
       case when ${status} = 'Complete' then ${job.at} + interval '9 days' end,
       case when ${status} = 'Invoiced' then ${job.at} + interval '10 days' end,
       ${job.at}, ${job.at}
     from generate_series(${lo}, ${hi}) i`,
    p,
  );

  await step(
    client,
    'templates',
    `insert into templates (company_id, uuid, name, description, pricing_type, base_price, tiers, addons, tax_rate, created_at, updated_at)
     values
       ($1, ${row('customers', 'tpl', '1').id}, 'Diagnostic visit', 'Flat-rate diagnostic', 'flat', 150.00, null,
        '[{"id":"filter","name":"Filter","price":"25.00"}]'::jsonb, 8.25, to_timestamp(${BASE_MS} / 1000.0), to_timestamp(${BASE_MS} / 1000.0)),
       ($1, ${row('customers', 'tpl', '2').id}, 'System replacement', 'Good / better / best', 'tiered', null,
        '{"good":"4000.00","better":"6500.00","best":"9000.00"}'::jsonb, '[]'::jsonb, 8.25,
        to_timestamp(${BASE_MS} / 1000.0), to_timestamp(${BASE_MS} / 1000.0))`,
    p,
  );

  const est = row('estimates', K, 'i');
  const estJob = '(i * 2)';
  const estStatus = pick(ESTIMATE_STATUSES, 'i');
  await batched(client, 'estimates', c.estimates, (lo, hi) =>
    `insert into estimates (company_id, uuid, estimate_number, estimate_seq, customer_uuid, job_uuid, template_uuid, location_uuid,
       created_by_user_id, status, template_name, pricing_type, selected_tier, base_amount, addons_amount, tax_amount,
       total_amount, quantity, service_description, expires_at, responded_at, created_at, updated_at)
     select $1, ${est.id}, 'EST-' || lpad(i::text, greatest(4, length(i::text)), '0'), i,
       ${row('customers', K, customerOfJob(estJob, n)).id}, ${row('jobs', K, estJob).id},
       ${row('customers', 'tpl', '(i % 2) + 1').id}, ${row('customers', 'loc', '(i % 3) + 1').id}, $2,
       ${estStatus}, case when i % 2 = 0 then 'Diagnostic visit' else 'System replacement' end,
       case when i % 2 = 0 then 'flat' else 'tiered' end,
       case when i % 2 = 0 then null else ${pick(['good', 'better', 'best'], 'i / 2')} end,
       v.base, 0, round(v.base * 0.0825, 2), v.base + round(v.base * 0.0825, 2), 1,
       'Estimate for job ' || (i * 2), ${est.at} + interval '30 days',
       case when ${estStatus} in ('Accepted', 'Declined') then ${est.at} + interval '2 days' end,
       ${est.at}, ${est.at}
     from generate_series(${lo}, ${hi}) i,
       lateral (select case when i % 2 = 0 then 150.00 else (array[4000.00, 6500.00, 9000.00])[((i / 2) % 3) + 1] end as base) v`,
    [companyId, userId],
  );

  // Invoices: job 2i-1; two line items; the first 80% are paid in full by payment i.
  const inv = row('invoices', K, 'i');
  const invJob = '(i * 2 - 1)';
  await batched(client, 'invoices', c.invoices, (lo, hi) =>
    `insert into invoices (company_id, uuid, invoice_number, invoice_seq, customer_uuid, job_uuid, location_uuid, created_by_user_id,
       invoice_type, issue_date, due_date, subtotal, tax_amount, discount_amount, total_amount, paid_amount, balance_amount,
       line_items, notes, terms, status, created_at, updated_at)
     select $1, ${inv.id}, 'INV-' || lpad(i::text, greatest(4, length(i::text)), '0'), i,
       ${row('customers', K, customerOfJob(invJob, n)).id}, ${row('jobs', K, invJob).id},
       ${row('customers', 'loc', '(i % 3) + 1').id}, $2,
       'Full', (${inv.at})::date, (${inv.at})::date + 30,
       v.lt1 + v.lt2, v.tax1, 0, v.lt1 + v.lt2 + v.tax1,
       case when i <= ${c.payments} then v.lt1 + v.lt2 + v.tax1 else 0 end,
       case when i <= ${c.payments} then 0 else v.lt1 + v.lt2 + v.tax1 end,
       jsonb_build_array(
         jsonb_build_object('description', 'Labor', 'quantity', v.q1, 'unit_price', v.u1, 'line_total', v.lt1, 'tax_rate', 8.25, 'tax_amount', v.tax1),
         jsonb_build_object('description', 'Parts', 'quantity', 1, 'unit_price', v.u2, 'line_total', v.lt2, 'tax_rate', 0, 'tax_amount', 0)),
       case when i % 3 = 0 then 'Thank you for your business' end, 'Net 30',
       case when i <= ${c.payments} then 'Paid' else 'Pending' end,
       ${inv.at}, ${inv.at}
     from generate_series(${lo}, ${hi}) i,
       lateral (select (i % 3) + 1 as q1, (50 + (i % 200)) + 0.99 as u1, (25 + (i % 50))::numeric(12,2) as u2) b,
       lateral (select b.q1, b.u1, b.u2, b.q1 * b.u1 as lt1, b.u2 as lt2, round(b.q1 * b.u1 * 0.0825, 2) as tax1) v`,
    [companyId, userId],
  );

  // The payment scenario's invoice: a huge balance that 1.00 payments never exhaust.
  const big = row('invoices', K, String(c.invoices + 1));
  const bigSeq = c.invoices + 1;
  await step(
    client,
    'invoice for payments',
    `insert into invoices (company_id, uuid, invoice_number, invoice_seq, customer_uuid, job_uuid, created_by_user_id,
       issue_date, due_date, subtotal, tax_amount, total_amount, paid_amount, balance_amount, line_items, status, created_at, updated_at)
     values ($1, ${big.id}, 'INV-' || ${bigSeq}, ${bigSeq}, ${row('customers', K, '1').id}, ${row('jobs', K, '1').id}, $2,
       (${big.at})::date, '2099-12-31', 9999999.00, 0, 9999999.00, 0, 9999999.00,
       '[{"description":"Bench balance","quantity":1,"unit_price":9999999,"line_total":9999999,"tax_rate":0,"tax_amount":0}]'::jsonb,
       'Pending', ${big.at}, ${big.at})`,
    [companyId, userId],
  );

  const pay = row('payments', K, 'inv.invoice_seq');
  await batched(client, 'payments', c.payments, (lo, hi) =>
    `insert into payments (company_id, uuid, payment_number, payment_seq, invoice_uuid, customer_uuid, payment_type, payment_method,
       amount, processing_fee, net_amount, payment_date, reference_number, status, processed_at, created_by_user_id, created_at, updated_at)
     select $1, ${pay.id}, 'PAY-' || lpad(inv.invoice_seq::text, greatest(4, length(inv.invoice_seq::text)), '0'), inv.invoice_seq,
       inv.uuid, inv.customer_uuid, ${pick(['credit_card', 'ach', 'check', 'cash', 'other'], 'inv.invoice_seq')},
       case when inv.invoice_seq % 5 = 0 then 'Visa' end,
       inv.total_amount, 0, inv.total_amount, (${pay.at})::date,
       case when inv.invoice_seq % 5 = 2 then 'CHK-' || inv.invoice_seq end,
       'Completed', ${pay.at}, $2, ${pay.at}, ${pay.at}
     from invoices inv
     where inv.company_id = $1 and inv.invoice_seq between ${lo} and ${hi}`,
    [companyId, userId],
  );

  const photo = row('photos', K, 'i');
  const photoJob = row('jobs', K, '(i * 5)').id;
  await batched(client, 'job photos (records only)', c.photos, (lo, hi) =>
    `insert into job_photos (company_id, uuid, job_uuid, user_id, storage_key, photo_type, file_name, file_size, mime_type,
       taken_at, created_at, updated_at)
     select $1::uuid, p.id, p.job, $2, $1::uuid::text || '/' || p.job::text || '/' || p.id::text || '.jpg', ${pick(PHOTO_TYPES, 'i')},
       'IMG_' || lpad(i::text, 5, '0') || '.jpg', 1500000 + (i % 1000) * 1000, 'image/jpeg', ${photo.at}, ${photo.at}, ${photo.at}
     from generate_series(${lo}, ${hi}) i, lateral (select ${photo.id} as id, ${photoJob} as job) p`,
    [companyId, userId],
  );

  // Counters past the seeded numbers, so the creates of the run do not collide.
  await step(
    client,
    'numbering counters',
    `insert into numbering_counters (company_id, kind, prefix, padding, next_number)
     values ($1, 'invoice', 'INV-', 4, ${c.invoices + 2}), ($1, 'estimate', 'EST-', 4, ${c.estimates + 1}),
            ($1, 'payment', 'PAY-', 4, ${c.payments + 1})
     on conflict (company_id, kind) do update set next_number = excluded.next_number, prefix = excluded.prefix, padding = excluded.padding`,
    p,
  );
  return { bigInvoiceUuid: (await client.query<{ id: string }>(`select ${big.id} as id`)).rows[0].id };
}

async function seedOthers(client: pg.PoolClient, companyIds: string[], size: SeedSize) {
  if (companyIds.length === 0 || size.otherCustomers === 0) return;
  const per = Math.floor(size.otherCustomers / companyIds.length);
  const rest = size.otherCustomers - per * companyIds.length;
  const started = performance.now();
  let rows = 0;
  for (const [index, companyId] of companyIds.entries()) {
    const k = index + 1;
    const total = per + (k <= rest ? 1 : 0);
    for (let lo = 1; lo <= total; lo += BATCH) {
      const hi = Math.min(total, lo + BATCH - 1);
      const result = await client.query(
        `insert into customers (${CUSTOMER_COLUMNS}) ${customersSql(k, '$1', String(lo), String(hi))}`,
        [companyId],
      );
      rows += result.rowCount ?? 0;
    }
  }
  log(`customers (${companyIds.length} other companies)`, rows, (performance.now() - started) / 1000);
}

/**
 * Makes sure the bench database holds a seed of `size`; seeds it (dropping and recreating the database)
 * when it does not, or when BENCH_RESEED=1.
 */
export async function ensureSeed(size: SeedSize, env: NodeJS.ProcessEnv = process.env): Promise<SeedInfo & { reused: boolean }> {
  const urls = benchUrls(env);
  if (env.BENCH_RESEED !== '1') {
    const existing = await existingSeed(urls, size);
    if (existing) {
      process.stdout.write(`Seed: reusing ${urls.name} (${describeSize(size)}, seeded ${existing.seededAt} in ${existing.seedSeconds.toFixed(1)} s)\n`);
      return { ...existing, reused: true };
    }
  }
  process.stdout.write(`Seed: (re)creating database ${urls.name}, ${describeSize(size)}\n`);
  const started = performance.now();
  await recreateDatabase(urls);
  const database: Database = await createDatabase({
    DATABASE_URL: urls.bench,
    DATA_DIR: './data',
    DATABASE_POOL_SIZE: 4,
    STATEMENT_TIMEOUT_MS: 0,
  });
  try {
    await migrateDatabase(database);
    const pool = database.pool!;
    const large = await createCompany(database.db, { name: 'Bench Large Co', email: 'owner@large.bench.example.com' });
    const others: string[] = [];
    for (let k = 1; k <= size.otherCompanies; k++) {
      const other = await createCompany(database.db, { name: `Bench Co ${k}`, email: `owner${k}@bench.example.com` });
      others.push(other.company_uuid);
    }

    const client = await pool.connect();
    let bigInvoiceUuid: string;
    try {
      await client.query('set synchronous_commit = off');
      await client.query("set maintenance_work_mem = '256MB'");
      // Trigram GIN entries go to the pending list and are merged in bulk by the vacuum at the end.
      await client.query("set gin_pending_list_limit = '1GB'");
      await client.query(FUNCTIONS);
      ({ bigInvoiceUuid } = await seedLarge(client, large.company_uuid, large.user_id, size));
      await seedOthers(client, others, size);
      await client.query(`create table bench_seed (id int primary key, version int not null, info jsonb not null)`);
    } finally {
      client.release();
    }
    const vacuumStarted = performance.now();
    await pool.query('vacuum (analyze)');
    process.stdout.write(`  ${'vacuum analyze'.padEnd(34)} ${''.padStart(9)}       ${((performance.now() - vacuumStarted) / 1000).toFixed(1)} s\n`);

    const seedSeconds = (performance.now() - started) / 1000;
    const info: SeedInfo = {
      size,
      counts: countsFor(size.customers, size.relatedOf),
      companyUuid: large.company_uuid,
      userId: large.user_id,
      apiKey: large.api_key,
      bigInvoiceUuid,
      seedSeconds,
      seededAt: new Date().toISOString(),
    };
    await pool.query('insert into bench_seed (id, version, info) values (1, $1, $2)', [SEED_VERSION, JSON.stringify(info)]);
    process.stdout.write(`Seed: done in ${seedSeconds.toFixed(1)} s\n`);
    return { ...info, reused: false };
  } finally {
    await database.close();
  }
}

export function describeSize(size: SeedSize): string {
  const c = countsFor(size.customers, size.relatedOf);
  const fmt = (value: number) => value.toLocaleString('en-US');
  return (
    `large company: ${fmt(c.customers)} customers, ${fmt(c.jobs)} jobs, ${fmt(c.estimates)} estimates, ` +
    `${fmt(c.invoices)} invoices, ${fmt(c.payments)} payments, ${fmt(c.photos)} photo records; ` +
    `${size.otherCompanies} other companies: ${fmt(size.otherCustomers)} customers`
  );
}

/**
 * E1's feed: tops the large company's events up to `target` (BENCH_EVENTS), customer.updated events
 * carrying a customer-sized record, written in one statement and one transaction (so they share one txid
 * and the feed orders them by seq). created_at spreads over the last hour, well inside the retention
 * period, so the server's cleanup leaves them alone and an `after` among them is never too old. Kept
 * apart from the seed marker: a bench database seeded before E1 existed only gains the events.
 */
export async function ensureEvents(databaseUrl: string, companyUuid: string, target: number): Promise<{ events: number; added: number; seconds: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const started = performance.now();
    const count = async () =>
      Number(
        (
          await client.query<{ n: string }>(
            `select count(*) as n from events where company_id = $1 and created_at > now() - interval '7 days'`,
            [companyUuid],
          )
        ).rows[0].n,
      );
    const have = await count();
    const missing = target - have;
    if (missing <= 0) return { events: have, added: 0, seconds: 0 };
    await client.query('set synchronous_commit = off');
    await client.query(
      `with source as (
         select row_number() over (order by created_at, uuid) - 1 as k, c.*
         from (select * from customers where company_id = $1 order by created_at, uuid limit 10000) c
       )
       insert into events (company_id, uuid, type, object_type, object_uuid, data, created_at)
       select $1, gen_random_uuid(), 'customer.updated', 'customer', s.uuid,
              -- The record as the API's customer GET answers it, compact like JSON.stringify (row_to_json).
              ('{"object":' || (select row_to_json(record) from (select
                  s.uuid, s.first_name, s.last_name, s.company_name, s.email, s.phone, s.customer_type, s.is_vip,
                  s.physical_address1, s.physical_address2, s.physical_city, s.physical_state, s.physical_zip,
                  s.billing_address1, s.billing_address2, s.billing_city, s.billing_state, s.billing_zip,
                  s.primary_service_location_uuid, 'Feed event ' || i as notes, s.internal_flags, s.on_my_way_notify_via,
                  to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at,
                  to_char((now() - ($2::int - i) * interval '30 milliseconds') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as updated_at,
                  null as deleted_at) record)::text
                || ',"previous_attributes":{"notes":' || to_json('Feed event ' || (i - 1))::text || '}}')::json,
              now() - ($2::int - i) * interval '30 milliseconds'
       from generate_series(1, $2::int) i
       cross join (select count(*) as n from source) m
       join source s on s.k = i % m.n
       order by i`,
      [companyUuid, missing],
    );
    await client.query('analyze events');
    return { events: await count(), added: missing, seconds: (performance.now() - started) / 1000 };
  } finally {
    await client.end();
  }
}

/** Bump when the schedule seed's content changes, so it is made again. */
const SCHEDULE_VERSION = 1;

export interface ScheduleSeed {
  companyUuid: string;
  apiKey: string;
  /** The company's 50 technicians. */
  technicians: string[];
  /** Its jobs (visits are made for them). */
  jobs: string[];
  /** The seeded visits span [from, to): V1 and A1 pick weeks inside. */
  from: string;
  to: string;
}

/**
 * V1, V2 and A1's company (DECISIONS §13): 50 technicians and 100,000 visits over two years (one year back,
 * one ahead), 2 hours each, in up to three blocks a day per technician, so no technician is booked twice;
 * past visits are Completed, future ones Scheduled and hold their technician in schedule_holds. Made once
 * in its own company, kept apart from the seed marker (table bench_schedule), so a bench database seeded
 * before scheduling existed only gains it.
 */
export async function ensureSchedule(databaseUrl: string, visits = 100_000): Promise<ScheduleSeed> {
  const database: Database = await createDatabase({ DATABASE_URL: databaseUrl, DATA_DIR: './data', DATABASE_POOL_SIZE: 2, STATEMENT_TIMEOUT_MS: 0 });
  try {
    await migrateDatabase(database);
    const pool = database.pool!;
    await pool.query('create table if not exists bench_schedule (id int primary key, version int not null, info jsonb not null)');
    const { rows } = await pool.query<{ version: number; info: ScheduleSeed & { visits: number } }>('select version, info from bench_schedule where id = 1');
    const known = rows[0];
    if (known && known.version === SCHEDULE_VERSION && known.info.visits === visits) {
      const company = await pool.query('select 1 from companies where uuid = $1', [known.info.companyUuid]);
      if (company.rowCount) {
        // A table a later migration filled (visit_assignees) has no statistics yet on a server without autovacuum.
        await pool.query('vacuum (analyze) visit_assignees');
        return known.info;
      }
    }
    const started = performance.now();
    const created = await createCompany(database.db, { name: 'Bench Schedule Co', email: 'owner@schedule.bench.example.com' });
    const companyId = created.company_uuid;
    const client = await pool.connect();
    try {
      await client.query('set synchronous_commit = off');
      await client.query(
        `insert into users (company_id, id, first_name, last_name, email, created_at, updated_at)
         select $1, gen_random_uuid(), 'Tech', 'No ' || i, 'sched' || i || '@bench.example.com', now(), now() from generate_series(1, 50) i`,
        [companyId],
      );
      await client.query(
        `insert into locations (company_id, uuid, name, address1, city, state, zip, timezone, is_primary)
         values ($1, gen_random_uuid(), 'Depot', '1 Depot Rd', 'Austin', 'TX', '78701', 'America/Chicago', true)`,
        [companyId],
      );
      const customer = (
        await client.query<{ uuid: string }>(
          `insert into customers (company_id, uuid, first_name, last_name) values ($1, gen_random_uuid(), 'Sched', 'Customer') returning uuid`,
          [companyId],
        )
      ).rows[0].uuid;
      await client.query(
        `insert into jobs (company_id, uuid, customer_uuid, title, status, service_address1, service_city, service_state, service_zip)
         select $1, gen_random_uuid(), $2, 'Scheduled job ' || i, 'Scheduled', (100 + i) || ' Elm St', 'Austin', 'TX', '78701'
         from generate_series(1, 1000) i`,
        [companyId, customer],
      );
      // Visit i: day i / 137 of the two years, technician (i % 137) % 50, block (i % 137) / 50 of the day.
      await client.query(
        `with techs as (select id, row_number() over (order by id) - 1 as n from users where company_id = $1),
              js as (select uuid, row_number() over (order by uuid) - 1 as n from jobs where company_id = $1),
              slots as (
                select i, date_trunc('day', now()) - interval '365 days' + (i / 137) * interval '1 day'
                          + interval '14 hours' + ((i % 137) / 50) * interval '3 hours' as s
                from generate_series(0, $2::int - 1) i)
         insert into visits (company_id, uuid, job_uuid, time_zone, starts_at, ends_at, assigned_user_ids, status, completed_at, created_at, updated_at)
         select $1, gen_random_uuid(), js.uuid, 'America/Chicago', slots.s, slots.s + interval '2 hours', array[techs.id],
                case when slots.s < now() then 'Completed' else 'Scheduled' end,
                case when slots.s < now() then slots.s + interval '2 hours' end, now(), now()
         from slots
         join techs on techs.n = (slots.i % 137) % 50
         join js on js.n = slots.i % 1000`,
        [companyId, visits],
      );
      await client.query(
        `insert into schedule_holds (company_id, uuid, user_id, starts_at, ends_at, visit_uuid)
         select company_id, gen_random_uuid(), assigned_user_ids[1], starts_at, ends_at, uuid
         from visits where company_id = $1 and status not in ('Completed', 'Cancelled')`,
        [companyId],
      );
    } finally {
      client.release();
    }
    await pool.query('vacuum (analyze) visits, visit_assignees, schedule_holds, users, jobs');
    const technicians = (await pool.query<{ id: string }>('select id from users where company_id = $1 and email like $2 order by id', [companyId, 'sched%'])).rows.map((row) => row.id);
    const jobs = (await pool.query<{ uuid: string }>('select uuid from jobs where company_id = $1 order by uuid', [companyId])).rows.map((row) => row.uuid);
    const range = (
      await pool.query<{ from: Date; to: Date }>('select min(starts_at) as from, max(ends_at) as to from visits where company_id = $1', [companyId])
    ).rows[0];
    const info = { companyUuid: companyId, apiKey: created.api_key, technicians, jobs, from: range.from.toISOString(), to: range.to.toISOString(), visits };
    await pool.query(
      `insert into bench_schedule (id, version, info) values (1, $1, $2) on conflict (id) do update set version = excluded.version, info = excluded.info`,
      [SCHEDULE_VERSION, JSON.stringify(info)],
    );
    process.stdout.write(`Schedule: 50 technicians, ${visits.toLocaleString('en-US')} visits seeded in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    return info;
  } finally {
    await database.close();
  }
}
