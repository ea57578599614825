import { sql } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeBillingSetup, makeInvoiceOf, makePayment, paymentBody, readJob } from './helpers/billing-factories.js';
import { eventsOf, getRecord, readFeed } from './helpers/events.js';
import { changedWhileRequestWaits } from './helpers/row-lock.js';
import { rowsOf } from './helpers/sql-rows.js';

/**
 * A Completed payment that leaves its invoice Pending is one statement (payments.service createSettling): the
 * invoice's amounts are settled under its row lock by the statement itself and filled into the JSON of the
 * answer, of both events and of the key's kept answer. These tests hold it to what the transaction path did.
 */
const ctx = await buildTestApp({ env: { WEBHOOK_WORKER_ENABLED: 'false' } });
const { app } = ctx;

function pay(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call(app, 'POST', '/api/v1/payments', { key, body, headers });
}

describe('a payment that leaves its invoice Pending', () => {
  it('answers, records and delivers exactly what the GETs answer, the payment first', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key, companyId } = setup.company;
    const endpoint = uuidv7();
    await ctx.database.db.execute(sql`insert into webhook_endpoints (company_id, uuid, url, events, enabled, secret)
      values (${companyId}, ${endpoint}, 'https://example.com/hook', '{*}'::text[], true, 'whsec_x')`);
    const invoice = await makeInvoiceOf(app, setup, 100.1);

    const payment = await makePayment(app, key, invoice.uuid, 40.05, { notes: 'Deposit', payment_details: { b: 1, a: [2] } });
    expect(payment.invoice).toEqual({ uuid: invoice.uuid, invoice_number: invoice.invoice_number, total_amount: 100.1, balance_amount: 60.05, status: 'Pending' });
    expect(payment.payment_number).toMatch(/^PAY-\d+$/);
    expect(payment).toEqual(await getRecord(app, key, `/payments/${payment.uuid}`));

    const [created] = await eventsOf(app, key, payment.uuid, 1);
    expect(created.type).toBe('payment.created');
    expect(created.data.object).toEqual(payment);
    const invoiceEvents = await eventsOf(app, key, invoice.uuid, 2);
    expect(invoiceEvents.map((event) => event.type)).toEqual(['invoice.created', 'invoice.updated']);
    expect(invoiceEvents[1].data.previous_attributes).toEqual({ paid_amount: 0, balance_amount: 100.1 });
    expect(invoiceEvents[1].data.object).toEqual(await getRecord(app, key, `/invoices/${invoice.uuid}`));
    expect(invoiceEvents[1].data.object).toMatchObject({ paid_amount: 40.05, balance_amount: 60.05, status: 'Pending' });

    // One feed order: the payment's event, then its invoice's; one delivery each.
    const feed = await readFeed(app, key);
    const types = feed.map((event) => `${event.type} ${event.object_uuid}`);
    expect(types.indexOf(`payment.created ${payment.uuid}`)).toBe(types.indexOf(`invoice.updated ${invoice.uuid}`) - 1);
    const deliveries = await rowsOf<{ event_uuid: string }>(
      ctx.database,
      sql`select event_uuid from webhook_deliveries where company_id = ${companyId} and event_uuid in (${created.uuid}, ${invoiceEvents[1].uuid})`,
    );
    expect(deliveries).toHaveLength(2);
    // No JSON the statement wrote kept a placeholder of the values it settled.
    const marked = await rowsOf<{ n: number }>(ctx.database, sql`select count(*)::int as n from events where company_id = ${companyId} and data::text like '%mark:%'`);
    expect(marked[0].n).toBe(0);
  });

  it('settles twenty concurrent payments of one invoice to the cent, numbered one after another', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key } = setup.company;
    const invoice = await makeInvoiceOf(app, setup, 100);
    const answers = await Promise.all(Array.from({ length: 20 }, () => pay(key, paymentBody(invoice.uuid, 1.23))));
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const numbers = answers.map((answer) => Number(answer.body.data.payment_number.slice(4))).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, index) => numbers[0] + index));
    // Each answer shows the balance its own settlement left: twenty distinct steps down from 100.
    const balances = answers.map((answer) => answer.body.data.invoice.balance_amount).sort((a, b) => b - a);
    expect(balances).toEqual(Array.from({ length: 20 }, (_, index) => Math.round((100 - 1.23 * (index + 1)) * 100) / 100));
    const settled = await getRecord(app, key, `/invoices/${invoice.uuid}`);
    expect(settled).toMatchObject({ paid_amount: 24.6, balance_amount: 75.4, status: 'Pending' });

    // The invoice's events chain, in the order the settlements took the row (the feed orders by transaction
    // start): each one's previous amounts are the one before's.
    const events = (await eventsOf(app, key, invoice.uuid, 21))
      .slice(1)
      .sort((a, b) => (b.data.previous_attributes!.balance_amount as number) - (a.data.previous_attributes!.balance_amount as number));
    let balance = 100;
    for (const event of events) {
      expect(event.data.previous_attributes).toEqual({ paid_amount: Math.round((100 - balance) * 100) / 100, balance_amount: balance });
      balance = event.data.object.balance_amount as number;
    }
    expect(balance).toBe(75.4);
  });

  it('pays an invoice off and refuses the overpayments when payments race past its total', async () => {
    const setup = await makeBillingSetup(app, ctx.database, { status: 'Complete' });
    const { key, companyId } = setup.company;
    const invoice = await makeInvoiceOf(app, setup, 10);
    const answers = await Promise.all(Array.from({ length: 15 }, () => pay(key, paymentBody(invoice.uuid, 1))));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(10).fill(200), ...Array(5).fill(400)]);
    for (const refused of answers.filter((answer) => answer.status === 400)) {
      expect(refused.body.error.details[0]).toMatchObject({ field: 'amount', code: 'out_of_range' });
    }
    expect(await getRecord(app, key, `/invoices/${invoice.uuid}`)).toMatchObject({ paid_amount: 10, balance_amount: 0, status: 'Paid' });
    expect((await readJob(ctx.database, companyId, setup.jobUuid))?.paidAt).not.toBeNull();
    const [{ n }] = await rowsOf<{ n: number }>(ctx.database, sql`select count(*)::int as n from payments where company_id = ${companyId}`);
    expect(n).toBe(10);
  });

  it('replays a keyed payment with the balance it settled, and runs it once', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key, companyId } = setup.company;
    const invoice = await makeInvoiceOf(app, setup, 50);
    const headers = { 'idempotency-key': `pay-${uuidv7()}` };
    const first = await pay(key, paymentBody(invoice.uuid, 20), headers);
    expect(first.status).toBe(200);
    await makePayment(app, key, invoice.uuid, 5);
    const again = await pay(key, paymentBody(invoice.uuid, 20), headers);
    expect(again.status).toBe(200);
    expect(again.raw.body).toBe(first.raw.body);
    expect(again.body.data.invoice.balance_amount).toBe(30);
    const [{ n }] = await rowsOf<{ n: number }>(ctx.database, sql`select count(*)::int as n from payments where company_id = ${companyId}`);
    expect(n).toBe(2);
  });

  it('refuses what the transaction path refuses: a Draft, a deleted, another company\'s or a missing invoice', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key } = setup.company;
    const draft = await makeInvoiceOf(app, setup, 10, { status: 'Draft' });
    const refusedDraft = await pay(key, paymentBody(draft.uuid, 1));
    expect(refusedDraft.status).toBe(400);
    expect(refusedDraft.body.error.details[0].field).toBe('invoice_uuid');

    const deleted = await makeInvoiceOf(app, setup, 10);
    expect((await call(app, 'DELETE', `/api/v1/invoices/${deleted.uuid}`, { key })).status).toBe(200);
    expect((await pay(key, paymentBody(deleted.uuid, 1))).status).toBe(400);

    const other = await makeBillingSetup(app, ctx.database);
    const theirs = await makeInvoiceOf(app, other, 10);
    const foreign = await pay(key, paymentBody(theirs.uuid, 1));
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.details[0]).toMatchObject({ field: 'invoice_uuid' });
    expect(await getRecord(app, other.company.key, `/invoices/${theirs.uuid}`)).toMatchObject({ paid_amount: 0, balance_amount: 10 });
    expect((await pay(key, paymentBody(uuidv7(), 1))).status).toBe(400);
  });
});

describe('an invoice changed since an earlier payment read it', () => {
  it('is read again: the next payment\'s events carry its notes, its customer and its job as they are now', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key } = setup.company;
    const invoice = await makeInvoiceOf(app, setup, 100);
    await makePayment(app, key, invoice.uuid, 10);
    expect((await call(app, 'PATCH', `/api/v1/invoices/${invoice.uuid}`, { key, body: { notes: 'Net 30' } })).status).toBe(200);
    await makePayment(app, key, invoice.uuid, 10);
    expect((await call(app, 'PATCH', `/api/v1/customers/${setup.customer.uuid}`, { key, body: { first_name: 'Renamed' } })).status).toBe(200);
    const third = await makePayment(app, key, invoice.uuid, 10);
    expect(third.customer.first_name).toBe('Renamed');
    expect((await call(app, 'PATCH', `/api/v1/jobs/${setup.jobUuid}`, { key, body: { title: 'Retitled' } })).status).toBe(200);
    await makePayment(app, key, invoice.uuid, 10);

    // Created, four settlements and the notes; a change of what it embeds records no event of the invoice.
    const events = await eventsOf(app, key, invoice.uuid, 6);
    expect(events).toHaveLength(6);
    const settlements = events.filter((event) => event.data.previous_attributes && 'paid_amount' in event.data.previous_attributes);
    expect(settlements.map((event) => event.data.object.paid_amount)).toEqual([10, 20, 30, 40]);
    expect(settlements.map((event) => event.data.object.notes)).toEqual([null, 'Net 30', 'Net 30', 'Net 30']);
    expect(settlements.map((event) => (event.data.object.customer as { first_name: string }).first_name)).toEqual(['Dana', 'Dana', 'Renamed', 'Renamed']);
    expect(settlements.map((event) => (event.data.object.job as { title: string }).title).slice(3)).toEqual(['Retitled']);
    expect(settlements[3].data.object).toEqual(await getRecord(app, key, `/invoices/${invoice.uuid}`));
  });
});

describe.skipIf(!ctx.databaseUrl)('an invoice that changes between the payment\'s read and its statement (PostgreSQL)', () => {
  it('is settled by the transaction path, and the event carries the invoice as changed', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key } = setup.company;
    const invoice = await makeInvoiceOf(app, setup, 100);
    // The payment reads the invoice (a read is not blocked by the lock), then its statement waits on the row.
    const answer = await changedWhileRequestWaits(
      ctx.databaseUrl!,
      { table: 'invoices', uuid: invoice.uuid, change: `update invoices set notes = 'Changed meanwhile', updated_at = now() where uuid = $1` },
      () => pay(key, paymentBody(invoice.uuid, 10)),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.data.invoice.balance_amount).toBe(90);
    const events = await eventsOf(app, key, invoice.uuid, 2);
    expect(events[1].data.object).toMatchObject({ notes: 'Changed meanwhile', paid_amount: 10, balance_amount: 90 });
    expect(events[1].data.object).toEqual(await getRecord(app, key, `/invoices/${invoice.uuid}`));
  });
});
