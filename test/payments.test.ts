import { describe, expect, it } from 'vitest';
import { payments } from '../src/db/schema/index.js';
import { expectSoftDeleted, expectTransitionRefused, expectValidationError } from './helpers/conventions.js';
import { buildTestApp, call } from './helpers/app.js';
import {
  countRowsOf,
  makeBillingSetup,
  makeInvoiceOf,
  makePayment,
  paymentBody,
  readJob,
  type BillingSetup,
} from './helpers/billing-factories.js';
import { makeCompany } from './helpers/factories.js';

const ctx = await buildTestApp();

const setup = () => makeBillingSetup(ctx.app, ctx.database);
const api = (s: BillingSetup, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown) =>
  call(ctx.app, method, `/api/v1${path}`, { key: s.company.key, body });

async function invoiceState(s: BillingSetup, invoiceUuid: string) {
  const response = await api(s, 'GET', `/invoices/${invoiceUuid}?include_deleted=true`);
  expect(response.status).toBe(200);
  const { paid_amount, balance_amount, status } = response.body.data;
  return { paid_amount, balance_amount, status };
}

/** A setup with one Pending invoice of `total`. */
async function invoiceOf(total: number) {
  const s = await setup();
  const invoice = await makeInvoiceOf(ctx.app, s, total);
  return { s, invoice };
}

describe('POST /payments', () => {
  it('records a Completed payment, numbers it and updates the invoice', async () => {
    const { s, invoice } = await invoiceOf(100);
    const payment = await makePayment(ctx.app, s.company.key, invoice.uuid, 30, {
      payment_type: 'credit_card',
      payment_method: 'visa',
      processing_fee: 0.87,
      authorization_code: 'A1B2',
      payment_details: { last4: '4242' },
    });
    expect(payment).toMatchObject({
      payment_number: 'PAY-0001',
      invoice_uuid: invoice.uuid,
      customer_uuid: s.customer.uuid,
      payment_type: 'credit_card',
      payment_method: 'visa',
      amount: 30,
      processing_fee: 0.87,
      net_amount: 29.13,
      payment_date: '2026-11-20',
      authorization_code: 'A1B2',
      payment_details: { last4: '4242' },
      status: 'Completed',
      created_by_user_id: s.company.userId,
      deleted_at: null,
      invoice: { uuid: invoice.uuid, invoice_number: invoice.invoice_number, total_amount: 100, balance_amount: 70, status: 'Pending' },
      customer: { uuid: s.customer.uuid, first_name: s.customer.first_name, last_name: s.customer.last_name },
    });
    expect(Date.parse(payment.processed_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 30, balance_amount: 70, status: 'Pending' });

    const second = await makePayment(ctx.app, s.company.key, invoice.uuid, 0.1);
    expect(second.payment_number).toBe('PAY-0002');
    expect(second.processing_fee).toBe(0);
    expect(second.net_amount).toBe(0.1);
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 30.1, balance_amount: 69.9, status: 'Pending' });
  });

  it('makes the invoice Paid and stamps the job paid_at when the balance reaches 0', async () => {
    const { s, invoice } = await invoiceOf(59.97);
    await makePayment(ctx.app, s.company.key, invoice.uuid, 0.1);
    await makePayment(ctx.app, s.company.key, invoice.uuid, 0.2);
    expect((await readJob(ctx.database, s.company.companyId, s.jobUuid)).paidAt).toBeNull();
    const last = await makePayment(ctx.app, s.company.key, invoice.uuid, 59.67);
    expect(last.invoice).toMatchObject({ balance_amount: 0, status: 'Paid' });
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 59.97, balance_amount: 0, status: 'Paid' });
    expect((await readJob(ctx.database, s.company.companyId, s.jobUuid)).paidAt).toBeInstanceOf(Date);
  });

  it('refuses an overpayment and leaves the invoice as it was', async () => {
    const { s, invoice } = await invoiceOf(100);
    await makePayment(ctx.app, s.company.key, invoice.uuid, 60);
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 40.01)), 'amount');
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 60, balance_amount: 40, status: 'Pending' });
    expect(await countRowsOf(ctx.database, payments, s.company.companyId)).toBe(1);
    const exact = await makePayment(ctx.app, s.company.key, invoice.uuid, 40);
    expect(exact.payment_number).toBe('PAY-0002');
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 0.01)), 'amount');
  });

  it('validates amount, fee and the read-only fields', async () => {
    const { s, invoice } = await invoiceOf(100);
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 0)), 'amount');
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, -5)), 'amount');
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 10.001)), 'amount');
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 10, { processing_fee: 10.01 })), 'processing_fee');
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 10, { payment_type: 'bitcoin' })), 'payment_type');
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 10, { customer_uuid: s.customer.uuid })), 'customer_uuid');
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 10, { payment_number: 'PAY-9' })), 'payment_number');
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 10, { net_amount: 10 })), 'net_amount');
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 10, { status: 'Refunded' })), 'status');
    expectValidationError(await api(s, 'POST', '/payments', paymentBody(invoice.uuid, 10, { payment_date: '2026-13-01' })), 'payment_date');
    expect(await countRowsOf(ctx.database, payments, s.company.companyId)).toBe(0);

    const feeEqualsAmount = await makePayment(ctx.app, s.company.key, invoice.uuid, 10, { processing_fee: 10 });
    expect(feeEqualsAmount.net_amount).toBe(0);
  });

  it('refuses invoices of another company, deleted invoices and Drafts', async () => {
    const a = await invoiceOf(100);
    const b = await invoiceOf(100);
    expectValidationError(await api(a.s, 'POST', '/payments', paymentBody(b.invoice.uuid, 10)), 'invoice_uuid');
    expect(await invoiceState(b.s, b.invoice.uuid)).toEqual({ paid_amount: 0, balance_amount: 100, status: 'Pending' });

    const draft = await makeInvoiceOf(ctx.app, a.s, 50, { status: 'Draft' });
    expectValidationError(await api(a.s, 'POST', '/payments', paymentBody(draft.uuid, 10)), 'invoice_uuid');

    expect((await api(a.s, 'DELETE', `/invoices/${a.invoice.uuid}`)).status).toBe(200);
    expectValidationError(await api(a.s, 'POST', '/payments', paymentBody(a.invoice.uuid, 10)), 'invoice_uuid');
    expect(await countRowsOf(ctx.database, payments, a.s.company.companyId)).toBe(0);
  });

  it('refuses to complete a Pending payment once its invoice is deleted', async () => {
    const { s, invoice } = await invoiceOf(100);
    const pending = await makePayment(ctx.app, s.company.key, invoice.uuid, 40, { status: 'Pending' });
    expect((await api(s, 'DELETE', `/invoices/${invoice.uuid}`)).status).toBe(200);
    expectValidationError(await api(s, 'PATCH', `/payments/${pending.uuid}`, { status: 'Completed' }), 'status');
    const read = await api(s, 'GET', `/payments/${pending.uuid}`);
    expect(read.body.data.status).toBe('Pending');
    const deletedInvoice = await api(s, 'GET', `/invoices/${invoice.uuid}?include_deleted=true`);
    expect(deletedInvoice.body.data).toMatchObject({ paid_amount: 0, balance_amount: 100 });
  });

  it.skipIf(!ctx.databaseUrl)('accepts exactly 3 of 10 concurrent payments of 30 on a total of 100', async () => {
    const { s, invoice } = await invoiceOf(100);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => api(s, 'POST', '/payments', paymentBody(invoice.uuid, 30))),
    );
    const accepted = responses.filter((response) => response.status === 200);
    const refused = responses.filter((response) => response.status !== 200);
    expect(accepted).toHaveLength(3);
    expect(refused).toHaveLength(7);
    for (const response of refused) {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
    }
    expect(accepted.map((response) => response.body.data.payment_number).sort()).toEqual(['PAY-0001', 'PAY-0002', 'PAY-0003']);
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 90, balance_amount: 10, status: 'Pending' });
    expect(await countRowsOf(ctx.database, payments, s.company.companyId)).toBe(3);
  });
});

describe('PUT/PATCH /payments/:uuid status moves', () => {
  it('holds nothing while Pending and counts once Completed', async () => {
    const { s, invoice } = await invoiceOf(100);
    const pending = await makePayment(ctx.app, s.company.key, invoice.uuid, 100, { status: 'Pending' });
    expect(pending).toMatchObject({ status: 'Pending', processed_at: null });
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 0, balance_amount: 100, status: 'Pending' });
    expectValidationError(await api(s, 'PATCH', `/payments/${pending.uuid}`, { processed_at: '2026-11-21T10:00:00Z' }), 'processed_at');

    const completed = await api(s, 'PATCH', `/payments/${pending.uuid}`, { status: 'Completed' });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect(completed.body.data.status).toBe('Completed');
    expect(Date.parse(completed.body.data.processed_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 100, balance_amount: 0, status: 'Paid' });
    expect((await readJob(ctx.database, s.company.companyId, s.jobUuid)).paidAt).toBeInstanceOf(Date);
  });

  it('keeps a processed_at sent with the move to Completed', async () => {
    const { s, invoice } = await invoiceOf(100);
    const pending = await makePayment(ctx.app, s.company.key, invoice.uuid, 10, { status: 'Pending' });
    const completed = await api(s, 'PUT', `/payments/${pending.uuid}`, { status: 'Completed', processed_at: '2026-11-21T10:00:00+02:00' });
    expect(completed.status).toBe(200);
    expect(completed.body.data.processed_at).toBe('2026-11-21T08:00:00.000Z');
  });

  it('re-checks the balance when a Pending payment completes', async () => {
    const { s, invoice } = await invoiceOf(100);
    const pending = await makePayment(ctx.app, s.company.key, invoice.uuid, 80, { status: 'Pending' });
    await makePayment(ctx.app, s.company.key, invoice.uuid, 50);
    expectValidationError(await api(s, 'PATCH', `/payments/${pending.uuid}`, { status: 'Completed' }), 'amount');
    const unchanged = await api(s, 'GET', `/payments/${pending.uuid}`);
    expect(unchanged.body.data).toMatchObject({ status: 'Pending', processed_at: null });
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 50, balance_amount: 50, status: 'Pending' });
  });

  it('moves Pending -> Failed and refuses every move out of Failed', async () => {
    const { s, invoice } = await invoiceOf(100);
    const pending = await makePayment(ctx.app, s.company.key, invoice.uuid, 10, { status: 'Pending' });
    const path = `/payments/${pending.uuid}`;
    const failed = await api(s, 'PATCH', path, { status: 'Failed' });
    expect(failed.status).toBe(200);
    expect(failed.body.data).toMatchObject({ status: 'Failed', processed_at: null });
    for (const status of ['Pending', 'Completed', 'Refunded']) expectTransitionRefused(await api(s, 'PATCH', path, { status }));
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 0, balance_amount: 100, status: 'Pending' });
  });

  it('refunds a Completed payment, reopening a Paid invoice, and refuses every other move', async () => {
    const { s, invoice } = await invoiceOf(100);
    const payment = await makePayment(ctx.app, s.company.key, invoice.uuid, 100);
    const path = `/payments/${payment.uuid}`;
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 100, balance_amount: 0, status: 'Paid' });
    for (const status of ['Pending', 'Failed']) expectTransitionRefused(await api(s, 'PATCH', path, { status }));
    expectValidationError(await api(s, 'PATCH', path, { status: 'Lost' }), 'status');

    const same = await api(s, 'PATCH', path, { status: 'Completed', notes: 'kept' });
    expect(same.status).toBe(200);
    expect(same.body.data).toMatchObject({ status: 'Completed', notes: 'kept', processed_at: payment.processed_at });

    const refunded = await api(s, 'PATCH', path, { status: 'Refunded' });
    expect(refunded.status).toBe(200);
    expect(refunded.body.data).toMatchObject({ status: 'Refunded', invoice: { balance_amount: 100, status: 'Pending' } });
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 0, balance_amount: 100, status: 'Pending' });
    for (const status of ['Pending', 'Completed', 'Failed']) expectTransitionRefused(await api(s, 'PATCH', path, { status }));
  });

  it('re-checks fee and balance when the amount of a Completed payment changes', async () => {
    const { s, invoice } = await invoiceOf(100);
    const payment = await makePayment(ctx.app, s.company.key, invoice.uuid, 40, { processing_fee: 1 });
    expectValidationError(await api(s, 'PATCH', `/payments/${payment.uuid}`, { amount: 100.01 }), 'amount');
    expectValidationError(await api(s, 'PATCH', `/payments/${payment.uuid}`, { processing_fee: 40.01 }), 'processing_fee');
    expectValidationError(await api(s, 'PATCH', `/payments/${payment.uuid}`, { invoice_uuid: invoice.uuid }), 'invoice_uuid');
    const raised = await api(s, 'PATCH', `/payments/${payment.uuid}`, { amount: 100 });
    expect(raised.status).toBe(200);
    expect(raised.body.data).toMatchObject({ amount: 100, net_amount: 99, invoice: { balance_amount: 0, status: 'Paid' } });
  });
});

describe('DELETE /payments/:uuid', () => {
  it('stops counting a deleted Completed payment and reopens the invoice', async () => {
    const { s, invoice } = await invoiceOf(100);
    const first = await makePayment(ctx.app, s.company.key, invoice.uuid, 70);
    await makePayment(ctx.app, s.company.key, invoice.uuid, 30);
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 100, balance_amount: 0, status: 'Paid' });

    const deleted = await api(s, 'DELETE', `/payments/${first.uuid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.message).toBe('Payment deleted successfully');
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 30, balance_amount: 70, status: 'Pending' });

    await expectSoftDeleted(ctx.app, s.company.key, `/api/v1/payments/${first.uuid}`);

    const live = await api(s, 'GET', '/payments');
    expect(live.body.data.pagination.total).toBe(1);
    const all = await api(s, 'GET', '/payments?include_deleted=true');
    expect(all.body.data.pagination.total).toBe(2);
  });
});

describe('settlement from a payment create', () => {
  it('keeps paid_amount equal to the live Completed payments, to the cent, across creates, updates, deletes and concurrent creates', async () => {
    const { s, invoice } = await invoiceOf(1000);
    const first = await makePayment(ctx.app, s.company.key, invoice.uuid, 10.01);
    const pending = await makePayment(ctx.app, s.company.key, invoice.uuid, 20.02, { status: 'Pending' });
    await makePayment(ctx.app, s.company.key, invoice.uuid, 30.03);
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 40.04, balance_amount: 959.96, status: 'Pending' });
    // A delete and an update settle from the sum; the creates after them add to what they stored.
    expect((await api(s, 'DELETE', `/payments/${first.uuid}`)).status).toBe(200);
    await makePayment(ctx.app, s.company.key, invoice.uuid, 5.05);
    expect((await api(s, 'PATCH', `/payments/${pending.uuid}`, { status: 'Completed' })).status).toBe(200);
    await makePayment(ctx.app, s.company.key, invoice.uuid, 0.07, { status: 'Pending' });
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 55.1, balance_amount: 944.9, status: 'Pending' });

    const concurrent = await Promise.all(
      Array.from({ length: 20 }, () => api(s, 'POST', '/payments', paymentBody(invoice.uuid, 1.01))),
    );
    expect(concurrent.map((response) => response.status)).toEqual(Array(20).fill(200));
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 75.3, balance_amount: 924.7, status: 'Pending' });

    const listed = await api(s, 'GET', `/payments?invoice_uuid=${invoice.uuid}&status=Completed&limit=100`);
    const sumCents = listed.body.data.payments.reduce((total: number, payment: { amount: number }) => total + Math.round(payment.amount * 100), 0);
    expect(sumCents).toBe(7530);
  });
});

describe('GET /payments', () => {
  it('lists newest first with the invoice, and filters', async () => {
    const a = await invoiceOf(500);
    const s = a.s;
    const other = await makeInvoiceOf(ctx.app, s, 500);
    const cash = await makePayment(ctx.app, s.company.key, a.invoice.uuid, 10);
    const check = await makePayment(ctx.app, s.company.key, other.uuid, 20, { payment_type: 'check', status: 'Pending' });

    const all = await api(s, 'GET', '/payments');
    expect(all.status).toBe(200);
    expect(all.body.data.pagination).toEqual({ page: 1, limit: 50, total: 2, total_pages: 1 });
    expect(all.body.data.payments.map((p: { uuid: string }) => p.uuid)).toEqual([check.uuid, cash.uuid]);
    expect(all.body.data.payments[1].invoice).toEqual({ uuid: a.invoice.uuid, invoice_number: a.invoice.invoice_number });

    const uuids = async (query: string) => {
      const response = await api(s, 'GET', `/payments?${query}`);
      expect(response.status).toBe(200);
      return response.body.data.payments.map((p: { uuid: string }) => p.uuid);
    };
    expect(await uuids(`invoice_uuid=${other.uuid}`)).toEqual([check.uuid]);
    expect(await uuids(`customer_uuid=${s.customer.uuid}`)).toEqual([check.uuid, cash.uuid]);
    expect(await uuids('payment_type=cash')).toEqual([cash.uuid]);
    expect(await uuids('status=Pending')).toEqual([check.uuid]);
    expect(await uuids('status=Completed&payment_type=check')).toEqual([]);
    expectValidationError(await api(s, 'GET', '/payments?status=Lost'), 'status');
  });

  it("hides one company's payments from another", async () => {
    const { s, invoice } = await invoiceOf(100);
    const payment = await makePayment(ctx.app, s.company.key, invoice.uuid, 10);
    const b = await makeCompany(ctx.database);
    const asB = (method: 'GET' | 'PATCH' | 'DELETE', body?: unknown) =>
      call(ctx.app, method, `/api/v1/payments/${payment.uuid}`, { key: b.key, body });
    for (const response of [await asB('GET'), await asB('PATCH', { status: 'Refunded' }), await asB('DELETE')]) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const list = await call(ctx.app, 'GET', `/api/v1/payments?include_deleted=true&invoice_uuid=${invoice.uuid}`, { key: b.key });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual({ payments: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 0 } });
    const unfiltered = await call(ctx.app, 'GET', '/api/v1/payments', { key: b.key });
    expect(unfiltered.body.data.pagination.total).toBe(0);
    expect(await invoiceState(s, invoice.uuid)).toEqual({ paid_amount: 10, balance_amount: 90, status: 'Pending' });
  });
});
