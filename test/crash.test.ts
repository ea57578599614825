import type { ChildProcess } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, describe, expect, it } from 'vitest';
import { customers, jobs } from '../src/db/schema/index.js';
import { createTestDatabase } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';
import { spawnServer } from './helpers/server-process.js';
import { rowsOf } from './helpers/sql-rows.js';

/**
 * The real server is killed with SIGKILL (no graceful shutdown, no flush) while invoices and payments
 * are being written; the database must then hold only whole transactions.
 */
const testDb = await createTestDatabase();
const children = new Set<ChildProcess>();
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await testDb.database.close();
  await testDb.drop();
});

async function startServer() {
  const server = await spawnServer({ DATABASE_URL: testDb.url, LOG_LEVEL: 'fatal', MIGRATE_ON_START: 'false' });
  children.add(server.child);
  return server;
}

const cents = (value: string | number) => Math.round(Number(value) * 100);

/** Waits until no other session of this database is inside a statement or a transaction (at most 10 s). */
async function settledBackends(): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [busy] = await rowsOf<{ count: number }>(testDb.database, sql`select count(*)::int as count from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and state is not null and state <> 'idle'`);
    if (busy.count === 0 || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Everything a crash must never leave behind, checked straight in the database. */
async function checkConsistency(companyId: string) {
  const invoices = await rowsOf<{
    uuid: string;
    invoice_number: string | null;
    invoice_seq: number | null;
    subtotal: string;
    tax_amount: string;
    discount_amount: string;
    total_amount: string;
    paid_amount: string;
    balance_amount: string;
    status: string;
    job_status: string;
    payments_sum: string;
  }>(testDb.database, sql`
    select i.uuid, i.invoice_number, i.invoice_seq::int as invoice_seq, i.subtotal::text, i.tax_amount::text,
      i.discount_amount::text, i.total_amount::text, i.paid_amount::text, i.balance_amount::text, i.status,
      j.status as job_status,
      (select coalesce(sum(p.amount), 0)::text from payments p
        where p.company_id = i.company_id and p.invoice_uuid = i.uuid and p.status = 'Completed' and p.deleted_at is null) as payments_sum
    from invoices i join jobs j on j.company_id = i.company_id and j.uuid = i.job_uuid
    where i.company_id = ${companyId}
    order by i.invoice_seq`);
  for (const invoice of invoices) {
    const label = JSON.stringify(invoice);
    expect(invoice.invoice_number, label).toMatch(/^INV-\d{4,}$/);
    expect(Number(invoice.invoice_number?.slice(4)), label).toBe(invoice.invoice_seq);
    expect(cents(invoice.total_amount), label).toBe(cents(invoice.subtotal) + cents(invoice.tax_amount) - cents(invoice.discount_amount));
    expect(cents(invoice.balance_amount), label).toBe(cents(invoice.total_amount) - cents(invoice.paid_amount));
    expect(cents(invoice.paid_amount), label).toBe(cents(invoice.payments_sum));
    expect(invoice.status, label).toBe(cents(invoice.balance_amount) === 0 ? 'Paid' : 'Pending');
    expect(invoice.job_status, label).toBe('Invoiced');
  }
  // Numbers are unique and consecutive: no gap from a create that died half-way.
  expect(invoices.map((invoice) => invoice.invoice_seq)).toEqual(invoices.map((_, index) => index + 1));
  expect(new Set(invoices.map((invoice) => invoice.invoice_number)).size).toBe(invoices.length);

  const payments = await rowsOf<{ payment_seq: number; payment_number: string }>(testDb.database, sql`
    select payment_seq::int as payment_seq, payment_number from payments where company_id = ${companyId} order by payment_seq`);
  expect(payments.map((payment) => payment.payment_seq)).toEqual(payments.map((_, index) => index + 1));
  expect(payments.every((payment) => /^PAY-\d{4,}$/.test(payment.payment_number))).toBe(true);

  // A job is Invoiced exactly when an invoice of it exists: no job moved without its invoice.
  const orphans = await rowsOf<{ uuid: string }>(testDb.database, sql`
    select j.uuid from jobs j where j.company_id = ${companyId} and j.status = 'Invoiced'
      and not exists (select 1 from invoices i where i.company_id = j.company_id and i.job_uuid = j.uuid)`);
  expect(orphans).toEqual([]);
  return { invoices: invoices.length, payments: payments.length };
}

describe.skipIf(!testDb.url)('SIGKILL between writes', () => {
  it('leaves no half-written invoice or payment, and numbering goes on without a gap', async () => {
    const company = await makeCompany(testDb.database);
    const customerUuid = uuidv7();
    await testDb.database.db.insert(customers).values({ companyId: company.companyId, uuid: customerUuid, firstName: 'Kill', lastName: 'Nine' });
    const jobUuids = Array.from({ length: 80 }, () => uuidv7());
    await testDb.database.db
      .insert(jobs)
      .values(jobUuids.map((uuid) => ({ companyId: company.companyId, uuid, customerUuid, title: 'Crash job', status: 'Complete' as const })));

    const server = await startServer();
    const headers = { authorization: `Bearer ${company.key}`, 'content-type': 'application/json' };
    const post = (base: string, path: string, body: unknown) =>
      fetch(`${base}/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) }).then(
        async (response) => ({ status: response.status, body: (await response.json().catch(() => null)) as any }),
        () => ({ status: 0, body: null }),
      );
    const invoiceBody = (jobUuid: string) => ({
      job_uuid: jobUuid,
      customer_uuid: customerUuid,
      due_date: '2099-12-31',
      discount_amount: 1.5,
      line_items: [
        { description: 'Labour', quantity: 2.5, unit_price: 80, tax_rate: 8.25 },
        { description: 'Parts', quantity: 1, unit_price: 19.99, tax_rate: 8.875 },
      ],
    });

    // A few invoices to pay during the crash.
    const payable: string[] = [];
    for (const jobUuid of jobUuids.slice(0, 4)) {
      const created = await post(server.base, '/invoices', invoiceBody(jobUuid));
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      payable.push(created.body.data.uuid);
    }

    // Invoice creates and payments all at once; the process dies as soon as the first answers, while the
    // others run (creates that share a disk flush finish together, so waiting for more could see them all done).
    let killed = false;
    const counted = <T>(promise: Promise<T>) =>
      promise.finally(() => {
        if (!killed) {
          killed = true;
          server.child.kill('SIGKILL');
        }
      });
    const requests = [
      ...jobUuids.slice(4).map((jobUuid) => counted(post(server.base, '/invoices', invoiceBody(jobUuid))).then((r) => ({ kind: 'invoice', ...r }))),
      ...Array.from({ length: 160 }, (_, index) =>
        counted(
          post(server.base, '/payments', {
            invoice_uuid: payable[index % payable.length],
            payment_type: 'cash',
            amount: 3.33,
            payment_date: '2026-11-20',
          }),
        ).then((r) => ({ kind: 'payment', ...r })),
      ),
    ];
    const [, signal] = await server.exited;
    expect(signal).toBe('SIGKILL');
    const results = await Promise.all(requests);
    // The killed process's backends may still be running a COMMIT it sent: PostgreSQL finishes it. Count only
    // once every transaction of the dead client has ended (committed or rolled back).
    await settledBackends();

    const ok = results.filter((result) => result.status === 200);
    const cut = results.filter((result) => result.status === 0);
    // The kill really landed mid-flight: some requests finished, some never got an answer.
    expect(ok.length).toBeGreaterThan(0);
    expect(cut.length).toBeGreaterThan(0);
    expect(results.filter((result) => result.status !== 200 && result.status !== 0)).toEqual([]);

    const counts = await checkConsistency(company.companyId);
    // Every answered create is stored (a 200 means committed); the killed ones may or may not be.
    const stored = new Set(
      (await rowsOf<{ uuid: string }>(testDb.database, sql`select uuid from invoices where company_id = ${company.companyId}`)).map((row) => row.uuid),
    );
    for (const result of ok.filter((r) => r.kind === 'invoice')) expect(stored.has(result.body.data.uuid)).toBe(true);
    expect(counts.invoices).toBeGreaterThanOrEqual(4 + ok.filter((r) => r.kind === 'invoice').length);
    expect(counts.payments).toBeGreaterThanOrEqual(ok.filter((r) => r.kind === 'payment').length);

    // A restarted server carries on: the next invoice gets the next number.
    const restarted = await startServer();
    const unused = (
      await rowsOf<{ uuid: string }>(testDb.database, sql`select uuid from jobs where company_id = ${company.companyId} and status = 'Complete' limit 1`)
    )[0];
    if (unused) {
      const next = await post(restarted.base, '/invoices', invoiceBody(unused.uuid));
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      expect(next.body.data.invoice_number).toBe(`INV-${String(counts.invoices + 1).padStart(4, '0')}`);
    }
    restarted.child.kill('SIGTERM');
    await restarted.exited;
    await checkConsistency(company.companyId);
  }, 60_000);
});
