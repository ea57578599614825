import { sql } from 'drizzle-orm';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { invoiceBody, makeBillingSetup } from './helpers/billing-factories.js';
import { eventsOf, getRecord } from './helpers/events.js';
import { changedWhileRequestWaits } from './helpers/row-lock.js';
import { rowsOf } from './helpers/sql-rows.js';

/**
 * An invoice create is one statement after its reads (invoices.service createInStatement): the job locked and
 * still as read, the invoice, the job's move to Invoiced, both events and the key. The status the invoice reads
 * as is computed by that statement and filled into the answer, the event and the key's kept answer. These tests
 * hold it to what the transaction path did.
 */
const ctx = await buildTestApp({ env: { WEBHOOK_WORKER_ENABLED: 'false' } });
const { app } = ctx;

function post(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call(app, 'POST', '/api/v1/invoices', { key, body, headers });
}

const LINES = [{ description: 'Service', unit_price: 120.5, quantity: 2, tax_rate: 8.25 }];

describe('an invoice create', () => {
  it('answers and records what the GETs answer: the invoice, and its job moved to Invoiced', async () => {
    const setup = await makeBillingSetup(app, ctx.database, { status: 'Complete' });
    const { key } = setup.company;
    const jobBefore = await getRecord(app, key, `/jobs/${setup.jobUuid}`);
    const created = await post(key, invoiceBody(setup, { line_items: LINES, notes: 'Thanks' }));
    expect(created.status).toBe(200);
    const invoice = created.body.data;
    expect(invoice).toMatchObject({ subtotal: 241, tax_amount: 19.88, total_amount: 260.88, balance_amount: 260.88, status: 'Pending' });
    expect(invoice.invoice_number).toMatch(/^INV-\d+$/);
    expect(invoice.job).toEqual({ uuid: setup.jobUuid, title: jobBefore.title, status: 'Invoiced' });
    expect(invoice).toEqual(await getRecord(app, key, `/invoices/${invoice.uuid}`));

    const [invoiceEvent] = await eventsOf(app, key, invoice.uuid, 1);
    expect(invoiceEvent.type).toBe('invoice.created');
    expect(invoiceEvent.data.object).toEqual(invoice);
    const [jobEvent] = await eventsOf(app, key, setup.jobUuid, 1);
    expect(jobEvent.type).toBe('job.updated');
    expect(jobEvent.data.previous_attributes).toEqual({ status: 'Complete', invoiced_at: null });
    expect(jobEvent.data.object).toEqual(await getRecord(app, key, `/jobs/${setup.jobUuid}`));
    const marked = await rowsOf<{ n: number }>(ctx.database, sql`select count(*)::int as n from events where company_id = ${setup.company.companyId} and data::text like '%mark:%'`);
    expect(marked[0].n).toBe(0);
  });

  it('reads Overdue at once when it is due before today, in the answer, the GET and the event', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key } = setup.company;
    const created = await post(key, invoiceBody(setup, { line_items: LINES, issue_date: '2020-01-01', due_date: '2020-01-31' }));
    expect(created.status).toBe(200);
    expect(created.body.data.status).toBe('Overdue');
    expect(await getRecord(app, key, `/invoices/${created.body.data.uuid}`)).toEqual(created.body.data);
    const [event] = await eventsOf(app, key, created.body.data.uuid, 1);
    expect(event.data.object.status).toBe('Overdue');
  });

  it('numbers concurrent invoices of one job one after another, each with its job.updated', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key } = setup.company;
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(key, invoiceBody(setup, { line_items: LINES }))));
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    const numbers = answers.map((answer) => Number(answer.body.data.invoice_number.slice(4))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 8 }, (_, index) => numbers[0] + index));
    const jobEvents = await eventsOf(app, key, setup.jobUuid, 8);
    expect(jobEvents.map((event) => event.type)).toEqual(Array(8).fill('job.updated'));
    expect(await getRecord(app, key, `/jobs/${setup.jobUuid}`)).toMatchObject({ status: 'Invoiced' });
  });

  it('replays a keyed create with the status it was answered, and creates once', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key, companyId } = setup.company;
    const headers = { 'idempotency-key': `inv-${uuidv7()}` };
    const body = invoiceBody(setup, { line_items: LINES, issue_date: '2020-01-01', due_date: '2020-01-31' });
    const first = await post(key, body, headers);
    expect(first.status).toBe(200);
    const again = await post(key, body, headers);
    expect(again.status).toBe(200);
    expect(again.raw.body).toBe(first.raw.body);
    expect(again.body.data.status).toBe('Overdue');
    const [{ n }] = await rowsOf<{ n: number }>(ctx.database, sql`select count(*)::int as n from invoices where company_id = ${companyId}`);
    expect(n).toBe(1);
  });

  it('refuses a missing customer, location, job or estimate, first in that order, and writes nothing', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key, companyId } = setup.company;
    const missing = uuidv7();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ customer_uuid: missing, job_uuid: missing }, 'customer_uuid'],
      [{ location_uuid: missing, job_uuid: missing }, 'location_uuid'],
      [{ job_uuid: missing, estimate_uuid: missing }, 'job_uuid'],
      [{ estimate_uuid: missing }, 'estimate_uuid'],
    ];
    for (const [overrides, field] of cases) {
      const refused = await post(key, invoiceBody(setup, { line_items: LINES, ...overrides }));
      expect(refused.status, field).toBe(400);
      expect(refused.body.error.details[0]).toMatchObject({ field, code: 'invalid_reference' });
    }
    const [{ n }] = await rowsOf<{ n: number }>(ctx.database, sql`select count(*)::int as n from invoices where company_id = ${companyId}`);
    expect(n).toBe(0);
  });
});

describe.skipIf(!ctx.databaseUrl)('a job that changes between the create\'s read and its statement (PostgreSQL)', () => {
  it('is billed by the transaction path, and the events carry the job as changed', async () => {
    const setup = await makeBillingSetup(app, ctx.database, { status: 'Complete' });
    const { key } = setup.company;
    // The create reads the job (a read is not blocked by the lock), then its statement waits on the row.
    const answer = await changedWhileRequestWaits(
      ctx.databaseUrl!,
      { table: 'jobs', uuid: setup.jobUuid, change: `update jobs set title = 'Renamed meanwhile', updated_at = now() where uuid = $1` },
      () => post(key, invoiceBody(setup, { line_items: LINES })),
    );
    expect(answer.status).toBe(200);
    const invoice = answer.body.data;
    expect(invoice.job).toEqual({ uuid: setup.jobUuid, title: 'Renamed meanwhile', status: 'Invoiced' });
    const [jobEvent] = await eventsOf(app, key, setup.jobUuid, 1);
    expect(jobEvent.data.object).toEqual(await getRecord(app, key, `/jobs/${setup.jobUuid}`));
    expect(jobEvent.data.object.title).toBe('Renamed meanwhile');
    const [invoiceEvent] = await eventsOf(app, key, invoice.uuid, 1);
    expect(invoiceEvent.data.object).toEqual(await getRecord(app, key, `/invoices/${invoice.uuid}`));
    // The statement that found the job changed wrote nothing: the transaction's commit took the first number.
    expect(invoice.invoice_number).toBe('INV-0001');
    expect((await post(key, invoiceBody(setup, { line_items: LINES }))).body.data.invoice_number).toBe('INV-0002');
  });
});

describe.skipIf(!ctx.databaseUrl)('a create that deadlocks with another transaction (PostgreSQL)', () => {
  it('answers 503 service_unavailable, writes nothing and takes no number; its retry takes the next one', async () => {
    const setup = await makeBillingSetup(app, ctx.database, { status: 'Complete' });
    const { key, companyId } = setup.company;
    expect((await post(key, invoiceBody(setup, { line_items: LINES }))).body.data.invoice_number).toBe('INV-0001');
    // Another transaction holds the company's counter; the create locks its job and, at its commit, waits on the
    // counter; the other transaction then waits on the job: PostgreSQL ends one of the two.
    const holder = new pg.Client({ connectionString: ctx.databaseUrl! });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(`select 1 from numbering_counters where company_id = $1 and kind = 'invoice' for update`, [companyId]);
      const running = post(key, invoiceBody(setup, { line_items: LINES }));
      await waitForLockWaiter(holder);
      const holderOutcome = holder.query('select 1 from jobs where uuid = $1 for update', [setup.jobUuid]).then(
        () => 'locked',
        (error: { code?: string }) => error.code,
      );
      const answer = await running;
      if (answer.status === 200) {
        // PostgreSQL chose the other transaction: the create went on once it was rolled back.
        expect(await holderOutcome).toBe('40P01');
        expect(answer.body.data.invoice_number).toBe('INV-0002');
        return;
      }
      expect(answer.status).toBe(503);
      expect(answer.body.error).toMatchObject({ code: 'service_unavailable', message: expect.stringMatching(/retry/i) });
      expect(await holderOutcome).toBe('locked');
      await holder.query('rollback');
    } finally {
      await holder.end();
    }
    const [{ n }] = await rowsOf<{ n: number }>(ctx.database, sql`select count(*)::int as n from invoices where company_id = ${companyId}`);
    expect(n).toBe(1);
    expect((await post(key, invoiceBody(setup, { line_items: LINES }))).body.data.invoice_number).toBe('INV-0002');
  });
});

/** Waits until a backend of the database other than `client`'s waits on a lock. */
async function waitForLockWaiter(client: pg.Client): Promise<void> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const { rows } = await client.query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
    );
    if (rows[0].n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no backend waited on a lock');
}
