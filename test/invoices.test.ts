import { describe, expect, it } from 'vitest';
import { invoices } from '../src/db/schema/index.js';
import { buildTestApp, call } from './helpers/app.js';
import {
  countRowsOf,
  insertEstimate,
  insertJob,
  invoiceBody,
  makeBillingSetup,
  makeInvoice,
  makeInvoiceOf,
  makePayment,
  readJob,
  softDeleteJob,
  type BillingSetup,
} from './helpers/billing-factories.js';
import { expectSoftDeleted, expectTransitionRefused, expectValidationError } from './helpers/conventions.js';
import { makeCompany, makeCustomer, makeLocation } from './helpers/factories.js';

const ctx = await buildTestApp();
/** Concurrency is only real on PostgreSQL; PGlite runs one statement at a time. */
const realPostgres = Boolean(ctx.databaseUrl);

const setup = (jobOptions = {}) => makeBillingSetup(ctx.app, ctx.database, jobOptions);
const api = (s: BillingSetup, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown) =>
  call(ctx.app, method, `/api/v1${path}`, { key: s.company.key, body });

/** Today in a timezone, computed independently of the service. */
const todayIn = (timeZone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());

function amounts(record: Record<string, unknown>) {
  const { subtotal, tax_amount, discount_amount, total_amount, balance_amount } = record;
  return { subtotal, tax_amount, discount_amount, total_amount, balance_amount };
}

describe('invoice arithmetic', () => {
  it('prices 3 x 19.99 at 8.875% to the cent', async () => {
    const s = await setup();
    const invoice = await makeInvoice(ctx.app, s, {
      line_items: [{ description: 'Filter', quantity: 3, unit_price: 19.99, tax_rate: 8.875 }],
    });
    expect(amounts(invoice)).toEqual({ subtotal: 59.97, tax_amount: 5.32, discount_amount: 0, total_amount: 65.29, balance_amount: 65.29 });
    expect(invoice.paid_amount).toBe(0);
    expect(invoice.line_items).toEqual([
      { description: 'Filter', quantity: 3, unit_price: 19.99, line_total: 59.97, tax_rate: 8.875, tax_amount: 5.32 },
    ]);
  });

  it('adds 0.1 + 0.2 to exactly 0.30 and taxes 100.00 at 8.875% as 8.88', async () => {
    const s = await setup();
    const floats = await makeInvoice(ctx.app, s, { line_items: [{ unit_price: 0.1 }, { unit_price: 0.2 }] });
    expect(amounts(floats)).toEqual({ subtotal: 0.3, tax_amount: 0, discount_amount: 0, total_amount: 0.3, balance_amount: 0.3 });
    expect(floats.line_items[0]).toEqual({ description: null, quantity: 1, unit_price: 0.1, line_total: 0.1, tax_rate: 0, tax_amount: 0 });

    const taxed = await makeInvoice(ctx.app, s, { line_items: [{ unit_price: 100, tax_rate: 8.875 }] });
    expect(amounts(taxed)).toEqual({ subtotal: 100, tax_amount: 8.88, discount_amount: 0, total_amount: 108.88, balance_amount: 108.88 });
  });

  it('rounds half a cent away from zero and less than half down, per line', async () => {
    const s = await setup();
    const preview = await api(s, 'POST', '/invoices/preview', {
      line_items: [
        { description: 'half up', quantity: 0.5, unit_price: 0.01 },
        { description: 'just below half', quantity: 0.499, unit_price: 0.01 },
        { description: 'tax half up', unit_price: 0.1, tax_rate: 5 },
        { description: 'tax below half', unit_price: 0.1, tax_rate: 2.5 },
        { description: 'tax 1.0005 down', unit_price: 20.01, tax_rate: 5 },
      ],
    });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    const lines = preview.body.data.breakdown.line_items;
    expect(lines.map((line: { line_total: number }) => line.line_total)).toEqual([0.01, 0, 0.1, 0.1, 20.01]);
    expect(lines.map((line: { tax_amount: number }) => line.tax_amount)).toEqual([0, 0, 0.01, 0, 1]);
    expect(preview.body.data.preview).toEqual({
      subtotal: 20.22,
      tax_amount: 1.01,
      discount_amount: 0,
      total_amount: 21.23,
      balance_amount: 21.23,
    });
  });

  it('sums line taxes at 8.875% (100.00 and 59.97) line by line', async () => {
    const s = await setup();
    const invoice = await makeInvoice(ctx.app, s, {
      line_items: [
        { unit_price: 100, tax_rate: 8.875 },
        { quantity: 3, unit_price: 19.99, tax_rate: 8.875 },
      ],
    });
    expect(amounts(invoice)).toEqual({ subtotal: 159.97, tax_amount: 14.2, discount_amount: 0, total_amount: 174.17, balance_amount: 174.17 });
  });

  it('applies a discount after tax and refuses one above subtotal + tax', async () => {
    const s = await setup();
    const invoice = await makeInvoice(ctx.app, s, {
      line_items: [{ unit_price: 100, tax_rate: 8.875 }],
      discount_amount: 8.88,
    });
    expect(amounts(invoice)).toEqual({ subtotal: 100, tax_amount: 8.88, discount_amount: 8.88, total_amount: 100, balance_amount: 100 });

    const tooMuch = await api(s, 'POST', '/invoices', invoiceBody(s, { line_items: [{ unit_price: 100, tax_rate: 8.875 }], discount_amount: 108.89 }));
    expectValidationError(tooMuch, 'discount_amount');
  });

  it('uses a given tax_amount instead of the line taxes', async () => {
    const s = await setup();
    const invoice = await makeInvoice(ctx.app, s, { line_items: [{ unit_price: 50, tax_rate: 10 }], tax_amount: 1.23 });
    expect(amounts(invoice)).toEqual({ subtotal: 50, tax_amount: 1.23, discount_amount: 0, total_amount: 51.23, balance_amount: 51.23 });
  });

  it('bills a 33.3333% progress share of subtotal and of tax, then the discount', async () => {
    const s = await setup();
    const invoice = await makeInvoice(ctx.app, s, {
      invoice_type: 'Progress',
      progress_percentage: 33.3333,
      line_items: [{ unit_price: 100, tax_rate: 10 }],
      discount_amount: 1,
    });
    expect(invoice.invoice_type).toBe('Progress');
    expect(invoice.progress_percentage).toBe(33.3333);
    expect(amounts(invoice)).toEqual({ subtotal: 33.33, tax_amount: 3.33, discount_amount: 1, total_amount: 35.66, balance_amount: 35.66 });

    const overShare = await api(s, 'POST', '/invoices', invoiceBody(s, {
      invoice_type: 'Progress',
      progress_percentage: 33.3333,
      subtotal: 100,
      discount_amount: 33.34,
    }));
    expectValidationError(overShare, 'discount_amount');
  });

  it('requires progress_percentage in (0, 100] on Progress invoices only', async () => {
    const s = await setup();
    const missing = await api(s, 'POST', '/invoices', invoiceBody(s, { invoice_type: 'Progress', subtotal: 10 }));
    expectValidationError(missing, 'progress_percentage');
    const zero = await api(s, 'POST', '/invoices', invoiceBody(s, { invoice_type: 'Progress', progress_percentage: 0, subtotal: 10 }));
    expectValidationError(zero, 'progress_percentage');
    const above = await api(s, 'POST', '/invoices', invoiceBody(s, { invoice_type: 'Progress', progress_percentage: 100.0001, subtotal: 10 }));
    expectValidationError(above, 'progress_percentage');
    const notProgress = await api(s, 'POST', '/invoices', invoiceBody(s, { invoice_type: 'Full', progress_percentage: 50, subtotal: 10 }));
    expectValidationError(notProgress, 'progress_percentage');
    const whole = await api(s, 'POST', '/invoices', invoiceBody(s, { invoice_type: 'Progress', progress_percentage: 100, subtotal: 10 }));
    expect(whole.status).toBe(200);
    expect(whole.body.data.total_amount).toBe(10);
  });

  it('refuses a subtotal that differs from the line items and accepts an equal one', async () => {
    const s = await setup();
    const lines = [{ quantity: 3, unit_price: 19.99 }];
    expectValidationError(await api(s, 'POST', '/invoices', invoiceBody(s, { line_items: lines, subtotal: 59.98 })), 'subtotal');
    expectValidationError(await api(s, 'POST', '/invoices/preview', { line_items: lines, subtotal: 60 }), 'subtotal');
    const equal = await api(s, 'POST', '/invoices', invoiceBody(s, { line_items: lines, subtotal: 59.97 }));
    expect(equal.status).toBe(200);
    expect(equal.body.data.subtotal).toBe(59.97);
  });

  it('refuses money with more than 2 decimals and negative prices', async () => {
    const s = await setup();
    expectValidationError(await api(s, 'POST', '/invoices', invoiceBody(s, { line_items: [{ unit_price: 1.005 }] })), 'line_items[0].unit_price');
    expectValidationError(await api(s, 'POST', '/invoices', invoiceBody(s, { line_items: [{ unit_price: -1 }] })), 'line_items[0].unit_price');
    expectValidationError(await api(s, 'POST', '/invoices', invoiceBody(s, { line_items: [{ unit_price: 1, quantity: 0 }] })), 'line_items[0].quantity');
  });
});

describe('amount sources without line items', () => {
  it('bills the given subtotal with the given tax', async () => {
    const s = await setup({ actualAmount: '999.00' });
    const invoice = await makeInvoice(ctx.app, s, { subtotal: 250, tax_amount: 20.63 });
    expect(amounts(invoice)).toEqual({ subtotal: 250, tax_amount: 20.63, discount_amount: 0, total_amount: 270.63, balance_amount: 270.63 });
    expect(invoice.line_items).toBeNull();
  });

  it("bills the estimate's base + addons and its tax", async () => {
    const s = await setup({ actualAmount: '999.00' });
    const estimateUuid = await insertEstimate(ctx.database, s.company.companyId, s.company.userId, s.customer.uuid, {
      baseAmount: '300.00',
      addonsAmount: '45.50',
      taxAmount: '28.50',
    });
    const invoice = await makeInvoice(ctx.app, s, { estimate_uuid: estimateUuid });
    expect(amounts(invoice)).toEqual({ subtotal: 345.5, tax_amount: 28.5, discount_amount: 0, total_amount: 374, balance_amount: 374 });
    expect(invoice.estimate).toEqual({ uuid: estimateUuid, estimate_number: expect.stringMatching(/^EST-/), status: 'Accepted' });
  });

  it('answers a create with exactly what its GET answers: embeds, Overdue, Paid at once', async () => {
    const s = await setup({ actualAmount: '120.00' });
    const location = await makeLocation(ctx.app, s.company.key, { name: 'Depot', timezone: 'Pacific/Kiritimati' });
    const estimateUuid = await insertEstimate(ctx.database, s.company.companyId, s.company.userId, s.customer.uuid, {
      baseAmount: '10.00',
      addonsAmount: '0.00',
      taxAmount: '0.00',
    });
    const bodies = [
      { location_uuid: location.uuid, estimate_uuid: estimateUuid },
      { due_date: '2020-01-01', notes: 'late', terms: 'Net 30', internal_notes: 'x' },
      { line_items: [{ description: 'Free', unit_price: 0 }] },
      { status: 'Draft', invoice_type: 'Progress', progress_percentage: 50 },
    ];
    const statuses: string[] = [];
    for (const body of bodies) {
      const created = await makeInvoice(ctx.app, s, body);
      const read = await api(s, 'GET', `/invoices/${created.uuid}`);
      expect(read.body.data).toStrictEqual(created);
      statuses.push(created.status);
      expect(created.job).toEqual({ uuid: s.jobUuid, title: expect.any(String), status: 'Invoiced' });
      expect(created.customer).toEqual({ uuid: s.customer.uuid, first_name: s.customer.first_name, last_name: s.customer.last_name, email: 'dana@example.com' });
    }
    expect(statuses).toEqual(['Pending', 'Overdue', 'Paid', 'Draft']);
    const withLocation = await api(s, 'GET', `/invoices?limit=100`);
    const first = withLocation.body.data.invoices.find((invoice: { location_uuid: string | null }) => invoice.location_uuid === location.uuid);
    // The location's timezone sets the business day of issue_date.
    expect(first.issue_date).toBe(todayIn('Pacific/Kiritimati'));
  });

  it("bills the job's actual_amount, else its estimated_amount, else 0", async () => {
    const s = await setup({ actualAmount: '180.25', estimatedAmount: '150.00' });
    const actual = await makeInvoice(ctx.app, s);
    expect(amounts(actual)).toEqual({ subtotal: 180.25, tax_amount: 0, discount_amount: 0, total_amount: 180.25, balance_amount: 180.25 });

    const estimatedJob = await insertJob(ctx.database, s.company.companyId, s.customer.uuid, { estimatedAmount: '150.00' });
    const estimated = await makeInvoice(ctx.app, s, { job_uuid: estimatedJob });
    expect(estimated.total_amount).toBe(150);

    const preview = await api(s, 'POST', '/invoices/preview', { job_uuid: estimatedJob, discount_amount: 50 });
    expect(preview.status).toBe(200);
    expect(preview.body.data.preview.total_amount).toBe(100);
  });

  it('creates a zero-total invoice Paid at once and stamps the job paid_at', async () => {
    const s = await setup();
    const invoice = await makeInvoice(ctx.app, s);
    expect(amounts(invoice)).toEqual({ subtotal: 0, tax_amount: 0, discount_amount: 0, total_amount: 0, balance_amount: 0 });
    expect(invoice.status).toBe('Paid');
    const job = await readJob(ctx.database, s.company.companyId, s.jobUuid);
    expect(job.paidAt).toBeInstanceOf(Date);

    const draftJob = await insertJob(ctx.database, s.company.companyId, s.customer.uuid);
    const draft = await makeInvoice(ctx.app, s, { job_uuid: draftJob, status: 'Draft' });
    expect(draft.status).toBe('Draft');
    expect((await readJob(ctx.database, s.company.companyId, draftJob)).paidAt).toBeNull();
  });
});

describe('POST /invoices/preview', () => {
  it('writes nothing and gives the numbers create gives', async () => {
    const s = await setup();
    const input = {
      invoice_type: 'Progress',
      progress_percentage: 62.5,
      line_items: [
        { description: 'Labor', quantity: 2.5, unit_price: 85, tax_rate: 0 },
        { description: 'Parts', quantity: 3, unit_price: 19.99, tax_rate: 8.875 },
      ],
      discount_amount: 5.55,
    };
    const before = await countRowsOf(ctx.database, invoices, s.company.companyId);
    const preview = await api(s, 'POST', '/invoices/preview', { ...input, job_uuid: s.jobUuid });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(await countRowsOf(ctx.database, invoices, s.company.companyId)).toBe(before);
    expect((await readJob(ctx.database, s.company.companyId, s.jobUuid)).status).toBe('Complete');

    const created = await makeInvoice(ctx.app, s, input);
    expect(preview.body.data.preview).toEqual(amounts(created));
    expect(preview.body.data.breakdown.line_items).toEqual(created.line_items);
    expect(preview.body.data.preview).toEqual({
      subtotal: 170.29,
      tax_amount: 3.33,
      discount_amount: 5.55,
      total_amount: 168.07,
      balance_amount: 168.07,
    });
  });

  it('takes the create body as it is: the same input, the same numbers', async () => {
    const s = await setup();
    const body = {
      job_uuid: s.jobUuid,
      customer_uuid: s.customer.uuid,
      due_date: '2099-12-31',
      issue_date: '2099-12-01',
      status: 'Draft',
      notes: 'Thanks',
      terms: 'Net 30',
      internal_notes: 'Gate code 1234',
      line_items: [{ description: 'Valve', quantity: 1.5, unit_price: 33.33, tax_rate: 7.25 }],
      discount_amount: 1.01,
    };
    const preview = await api(s, 'POST', '/invoices/preview', body);
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    const created = await api(s, 'POST', '/invoices', body);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(preview.body.data.preview).toEqual(amounts(created.body.data));
    // 1.5 x 33.33 = 49.995 -> 50.00; tax 3.625 -> 3.63; 50.00 + 3.63 - 1.01.
    expect(preview.body.data.preview).toEqual({ subtotal: 50, tax_amount: 3.63, discount_amount: 1.01, total_amount: 52.62, balance_amount: 52.62 });
  });

  it('accepts an empty body and refuses unknown fields, malformed values and foreign jobs', async () => {
    const s = await setup();
    const empty = await api(s, 'POST', '/invoices/preview', {});
    expect(empty.status).toBe(200);
    expect(empty.body.data).toEqual({
      preview: { subtotal: 0, tax_amount: 0, discount_amount: 0, total_amount: 0, balance_amount: 0 },
      breakdown: { line_items: [] },
    });
    const noBody = await api(s, 'POST', '/invoices/preview');
    expect(noBody.status, JSON.stringify(noBody.body)).toBe(200);
    expect(noBody.body.data).toEqual(empty.body.data);
    expectValidationError(await api(s, 'POST', '/invoices/preview', { colour: 'red' }), 'colour');
    expectValidationError(await api(s, 'POST', '/invoices/preview', { customer_uuid: 'not-a-uuid' }), 'customer_uuid');
    expectValidationError(await api(s, 'POST', '/invoices/preview', { due_date: '2026-02-30' }), 'due_date');
    const other = await setup();
    expectValidationError(await api(s, 'POST', '/invoices/preview', { job_uuid: other.jobUuid }), 'job_uuid');
    // Every id it names is checked as create checks it (DECISIONS §2): another company's, or none, is 400.
    expectValidationError(await api(s, 'POST', '/invoices/preview', { customer_uuid: other.customer.uuid }), 'customer_uuid');
    expectValidationError(await api(s, 'POST', '/invoices/preview', { customer_uuid: '00000000-0000-0000-0000-000000000000' }), 'customer_uuid');
    const foreignLocation = await makeLocation(ctx.app, other.company.key);
    expectValidationError(await api(s, 'POST', '/invoices/preview', { location_uuid: foreignLocation.uuid }), 'location_uuid');
    // And its job is the named customer's (DECISIONS §8), as on create.
    const neighbour = await makeCustomer(ctx.app, s.company.key);
    expectValidationError(await api(s, 'POST', '/invoices/preview', { customer_uuid: neighbour.uuid, job_uuid: s.jobUuid }), 'customer_uuid');
    const own = await makeLocation(ctx.app, s.company.key);
    const named = await api(s, 'POST', '/invoices/preview', { customer_uuid: s.customer.uuid, job_uuid: s.jobUuid, location_uuid: own.uuid });
    expect(named.status, named.raw.body).toBe(200);
  });
});

describe('POST /invoices', () => {
  it('numbers the invoice, links the job and moves it to Invoiced', async () => {
    const s = await setup();
    const invoice = await makeInvoiceOf(ctx.app, s, 120, { notes: 'Thanks', terms: 'Net 30', internal_notes: 'gate code 1234' });
    expect(invoice).toMatchObject({
      invoice_number: 'INV-0001',
      customer_uuid: s.customer.uuid,
      job_uuid: s.jobUuid,
      estimate_uuid: null,
      location_uuid: null,
      invoice_type: 'Full',
      progress_percentage: null,
      due_date: '2099-12-31',
      status: 'Pending',
      notes: 'Thanks',
      terms: 'Net 30',
      internal_notes: 'gate code 1234',
      deleted_at: null,
      customer: { uuid: s.customer.uuid, first_name: s.customer.first_name, last_name: s.customer.last_name, email: 'dana@example.com' },
      job: { uuid: s.jobUuid, title: 'Replace water heater', status: 'Invoiced' },
      estimate: null,
      location: null,
    });
    const job = await readJob(ctx.database, s.company.companyId, s.jobUuid);
    expect(job.status).toBe('Invoiced');
    expect(job.invoicedAt).toBeInstanceOf(Date);
    expect(job.paidAt).toBeNull();

    const second = await makeInvoiceOf(ctx.app, s, 10, { invoice_type: 'Partial' });
    expect(second.invoice_number).toBe('INV-0002');
  });

  it('refuses invoice_number, read-only amounts and a status other than Pending or Draft', async () => {
    const s = await setup();
    expectValidationError(await api(s, 'POST', '/invoices', invoiceBody(s, { invoice_number: 'INV-9999' })), 'invoice_number');
    expectValidationError(await api(s, 'POST', '/invoices', invoiceBody(s, { total_amount: 5 })), 'total_amount');
    expectValidationError(await api(s, 'POST', '/invoices', invoiceBody(s, { status: 'Paid' })), 'status');
    expectValidationError(await api(s, 'POST', '/invoices', { customer_uuid: s.customer.uuid, due_date: '2099-01-01' }), 'job_uuid');
    expectValidationError(await api(s, 'POST', '/invoices', invoiceBody(s, { due_date: '2026-02-30' })), 'due_date');
    expect(await countRowsOf(ctx.database, invoices, s.company.companyId)).toBe(0);
  });

  it("defaults issue_date to today in the location's timezone, else the primary location's, else New York", async () => {
    const s = await setup();
    const newYork = await makeInvoiceOf(ctx.app, s, 1);
    expect(newYork.issue_date).toBe(todayIn('America/New_York'));

    // UTC+14 and UTC-11 are always on different calendar days.
    const kiritimati = await makeLocation(ctx.app, s.company.key, { timezone: 'Pacific/Kiritimati' });
    const atLocation = await makeInvoiceOf(ctx.app, s, 1, { location_uuid: kiritimati.uuid });
    expect(atLocation.issue_date).toBe(todayIn('Pacific/Kiritimati'));
    expect(atLocation.location).toEqual({ uuid: kiritimati.uuid, name: kiritimati.name });

    await makeLocation(ctx.app, s.company.key, { timezone: 'Pacific/Pago_Pago', is_primary: true });
    const atPrimary = await makeInvoiceOf(ctx.app, s, 1);
    expect(atPrimary.issue_date).toBe(todayIn('Pacific/Pago_Pago'));
    expect(atPrimary.issue_date).not.toBe(atLocation.issue_date);

    const explicit = await makeInvoiceOf(ctx.app, s, 1, { issue_date: '2026-01-15' });
    expect(explicit.issue_date).toBe('2026-01-15');
  });

  it('refuses references that are not live records of the company', async () => {
    const a = await setup();
    const b = await setup();
    const bLocation = await makeLocation(ctx.app, b.company.key);
    const bEstimate = await insertEstimate(ctx.database, b.company.companyId, b.company.userId, b.customer.uuid, {
      baseAmount: '1.00',
      addonsAmount: '0.00',
      taxAmount: '0.00',
    });
    expectValidationError(await api(a, 'POST', '/invoices', invoiceBody(a, { customer_uuid: b.customer.uuid })), 'customer_uuid');
    expectValidationError(await api(a, 'POST', '/invoices', invoiceBody(a, { job_uuid: b.jobUuid })), 'job_uuid');
    expectValidationError(await api(a, 'POST', '/invoices', invoiceBody(a, { estimate_uuid: bEstimate })), 'estimate_uuid');
    expectValidationError(await api(a, 'POST', '/invoices', invoiceBody(a, { location_uuid: bLocation.uuid })), 'location_uuid');

    const deletedJob = await insertJob(ctx.database, a.company.companyId, a.customer.uuid);
    await softDeleteJob(ctx.database, a.company.companyId, deletedJob);
    expectValidationError(await api(a, 'POST', '/invoices', invoiceBody(a, { job_uuid: deletedJob })), 'job_uuid');
    expect(await countRowsOf(ctx.database, invoices, a.company.companyId)).toBe(0);
    expect((await readJob(ctx.database, b.company.companyId, b.jobUuid)).status).toBe('Complete');
  });

  it.skipIf(!realPostgres)('gives 20 concurrent creates 20 distinct consecutive numbers', async () => {
    const s = await setup();
    // One job each, so nothing but the numbering lock serializes the creates.
    const jobUuids = await Promise.all(
      Array.from({ length: 20 }, () => insertJob(ctx.database, s.company.companyId, s.customer.uuid)),
    );
    const responses = await Promise.all(
      jobUuids.map((jobUuid) => api(s, 'POST', '/invoices', invoiceBody(s, { job_uuid: jobUuid, line_items: [{ unit_price: 10 }] }))),
    );
    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
    const numbers = responses.map((response) => response.body.data.invoice_number).sort();
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `INV-${String(i + 1).padStart(4, '0')}`));
  });
});

describe('GET /invoices', () => {
  it('derives Overdue and filters by status', async () => {
    const s = await setup();
    const overdue = await makeInvoiceOf(ctx.app, s, 50, { due_date: '2020-01-01' });
    const pending = await makeInvoiceOf(ctx.app, s, 60);
    const draftPastDue = await makeInvoiceOf(ctx.app, s, 70, { due_date: '2020-01-01', status: 'Draft' });
    const paidPastDue = await makeInvoiceOf(ctx.app, s, 0, { due_date: '2020-01-01' });
    expect(overdue.status).toBe('Overdue');
    expect(pending.status).toBe('Pending');
    expect(draftPastDue.status).toBe('Draft');
    expect(paidPastDue.status).toBe('Paid');

    const uuidsFor = async (status: string) => {
      const response = await api(s, 'GET', `/invoices?status=${status}`);
      expect(response.status).toBe(200);
      expect(response.body.data.pagination.total).toBe(response.body.data.invoices.length);
      return response.body.data.invoices.map((invoice: { uuid: string }) => invoice.uuid);
    };
    expect(await uuidsFor('Overdue')).toEqual([overdue.uuid]);
    expect(await uuidsFor('Pending')).toEqual([pending.uuid]);
    expect(await uuidsFor('Draft')).toEqual([draftPastDue.uuid]);
    expect(await uuidsFor('Paid')).toEqual([paidPastDue.uuid]);
    expect(await uuidsFor('All')).toEqual([paidPastDue.uuid, draftPastDue.uuid, pending.uuid, overdue.uuid]);
    expectValidationError(await api(s, 'GET', '/invoices?status=Late'), 'status');

    // A payment that clears the balance ends Overdue.
    await makePayment(ctx.app, s.company.key, overdue.uuid, 50);
    expect(await uuidsFor('Overdue')).toEqual([]);
  });

  it('lists newest first with the customer, and filters by customer, job and number', async () => {
    const s = await setup();
    const otherCustomer = await makeCustomer(ctx.app, s.company.key);
    const otherJob = await insertJob(ctx.database, s.company.companyId, otherCustomer.uuid);
    const first = await makeInvoiceOf(ctx.app, s, 10);
    const second = await makeInvoiceOf(ctx.app, s, 20, { customer_uuid: otherCustomer.uuid, job_uuid: otherJob });

    const all = await api(s, 'GET', '/invoices');
    expect(all.status).toBe(200);
    expect(all.body.data.pagination).toEqual({ page: 1, limit: 50, total: 2, total_pages: 1 });
    expect(all.body.data.invoices.map((invoice: { uuid: string }) => invoice.uuid)).toEqual([second.uuid, first.uuid]);
    expect(all.body.data.invoices[1].customer).toEqual({
      uuid: s.customer.uuid,
      first_name: s.customer.first_name,
      last_name: s.customer.last_name,
    });

    const byCustomer = await api(s, 'GET', `/invoices?customer_uuid=${otherCustomer.uuid}`);
    expect(byCustomer.body.data.invoices.map((invoice: { uuid: string }) => invoice.uuid)).toEqual([second.uuid]);
    const byJob = await api(s, 'GET', `/invoices?job_uuid=${s.jobUuid}`);
    expect(byJob.body.data.invoices.map((invoice: { uuid: string }) => invoice.uuid)).toEqual([first.uuid]);
    const bySearch = await api(s, 'GET', '/invoices?search=inv-0002');
    expect(bySearch.body.data.invoices.map((invoice: { uuid: string }) => invoice.uuid)).toEqual([second.uuid]);
    const paged = await api(s, 'GET', '/invoices?limit=1&page=2');
    expect(paged.body.data.invoices.map((invoice: { uuid: string }) => invoice.uuid)).toEqual([first.uuid]);
    expect(paged.body.data.pagination).toEqual({ page: 2, limit: 1, total: 2, total_pages: 2 });
  });
});

describe('PUT/PATCH /invoices/:uuid', () => {
  it('updates the editable fields and refuses the fixed ones', async () => {
    const s = await setup();
    const invoice = await makeInvoiceOf(ctx.app, s, 100);
    const patched = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { notes: 'Updated', due_date: '2099-06-30', terms: null });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ notes: 'Updated', due_date: '2099-06-30', terms: null, total_amount: 100, status: 'Pending' });
    const put = await api(s, 'PUT', `/invoices/${invoice.uuid}`, { internal_notes: 'call first', issue_date: '2026-11-01' });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ internal_notes: 'call first', issue_date: '2026-11-01', notes: 'Updated' });
    expectValidationError(await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { total_amount: 1 }), 'total_amount');
    expectValidationError(await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { invoice_number: 'X' }), 'invoice_number');
  });

  it('applies the status rules', async () => {
    const s = await setup();
    const invoice = await makeInvoiceOf(ctx.app, s, 100);
    const path = `/invoices/${invoice.uuid}`;

    expectTransitionRefused(await api(s, 'PATCH', path, { status: 'Paid' }));
    expectTransitionRefused(await api(s, 'PATCH', path, { status: 'Overdue' }));
    expectValidationError(await api(s, 'PATCH', path, { status: 'Closed' }), 'status');

    const same = await api(s, 'PATCH', path, { status: 'Pending', notes: 'same status' });
    expect(same.status).toBe(200);
    expect(same.body.data).toMatchObject({ status: 'Pending', notes: 'same status' });

    const draft = await api(s, 'PATCH', path, { status: 'Draft' });
    expect(draft.status).toBe(200);
    expect(draft.body.data.status).toBe('Draft');
    const issued = await api(s, 'PATCH', path, { status: 'Pending' });
    expect(issued.status).toBe(200);
    expect(issued.body.data.status).toBe('Pending');

    await makePayment(ctx.app, s.company.key, invoice.uuid, 40);
    expectTransitionRefused(await api(s, 'PATCH', path, { status: 'Draft' }));
    await makePayment(ctx.app, s.company.key, invoice.uuid, 60);
    const paid = await api(s, 'GET', path);
    expect(paid.body.data.status).toBe('Paid');
    expectTransitionRefused(await api(s, 'PATCH', path, { status: 'Pending' }));
    const paidAgain = await api(s, 'PATCH', path, { status: 'Paid' });
    expect(paidAgain.status).toBe(200);
    expect(paidAgain.body.data.status).toBe('Paid');
  });

  it('treats Overdue as a no-op on an overdue invoice and makes a zero Draft Paid when issued', async () => {
    const s = await setup();
    const overdue = await makeInvoiceOf(ctx.app, s, 10, { due_date: '2020-01-01' });
    const same = await api(s, 'PATCH', `/invoices/${overdue.uuid}`, { status: 'Overdue' });
    expect(same.status).toBe(200);
    expect(same.body.data.status).toBe('Overdue');

    const zeroDraft = await makeInvoice(ctx.app, s, { status: 'Draft' });
    expect(zeroDraft.status).toBe('Draft');
    const issued = await api(s, 'PATCH', `/invoices/${zeroDraft.uuid}`, { status: 'Pending' });
    expect(issued.status).toBe(200);
    expect(issued.body.data.status).toBe('Paid');
    expect((await readJob(ctx.database, s.company.companyId, s.jobUuid)).paidAt).toBeInstanceOf(Date);
  });
});

describe('DELETE /invoices/:uuid and tenancy', () => {
  it('soft-deletes: 404 afterwards, visible with include_deleted', async () => {
    const s = await setup();
    const invoice = await makeInvoiceOf(ctx.app, s, 10);
    const deleted = await api(s, 'DELETE', `/invoices/${invoice.uuid}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.message).toBe('Invoice deleted successfully');
    await expectSoftDeleted(ctx.app, s.company.key, `/api/v1/invoices/${invoice.uuid}`);

    const live = await api(s, 'GET', '/invoices');
    expect(live.body.data.pagination.total).toBe(0);
    expect(live.body.data.invoices).toEqual([]);
    const all = await api(s, 'GET', '/invoices?include_deleted=true');
    expect(all.body.data.invoices.map((row: { uuid: string }) => row.uuid)).toEqual([invoice.uuid]);
  });

  it("hides one company's invoices from another", async () => {
    const a = await setup();
    const invoice = await makeInvoiceOf(ctx.app, a, 10);
    const b = await makeCompany(ctx.database);
    const asB = (method: 'GET' | 'PATCH' | 'DELETE', body?: unknown) =>
      call(ctx.app, method, `/api/v1/invoices/${invoice.uuid}`, { key: b.key, body });
    for (const response of [await asB('GET'), await asB('PATCH', { notes: 'x' }), await asB('DELETE')]) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const list = await call(ctx.app, 'GET', '/api/v1/invoices?include_deleted=true', { key: b.key });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual({ invoices: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 0 } });
    const stillThere = await api(a, 'GET', `/invoices/${invoice.uuid}`);
    expect(stillThere.body.data.notes).toBeNull();
  });
});

describe('PUT/PATCH /invoices/:uuid amounts', () => {
  it('re-prices from the stored line items when only the discount changes', async () => {
    const s = await setup();
    const invoice = await makeInvoice(ctx.app, s, {
      line_items: [{ description: 'Filter', quantity: 3, unit_price: 19.99, tax_rate: 8.875 }],
    });
    const patched = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { discount_amount: 5.29 });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(amounts(patched.body.data)).toEqual({ subtotal: 59.97, tax_amount: 5.32, discount_amount: 5.29, total_amount: 60, balance_amount: 60 });
    expect(patched.body.data.line_items).toHaveLength(1);
    const read = await api(s, 'GET', `/invoices/${invoice.uuid}`);
    expect(read.body.data).toEqual(patched.body.data);
  });

  it('replaces the line items, and with them a tax given for the old ones', async () => {
    const s = await setup();
    const invoice = await makeInvoice(ctx.app, s, {
      line_items: [{ quantity: 1, unit_price: 100 }],
      tax_amount: 3,
    });
    expect(invoice.tax_amount).toBe(3);
    const put = await api(s, 'PUT', `/invoices/${invoice.uuid}`, {
      line_items: [
        { description: 'Labor', quantity: 2, unit_price: 0.1, tax_rate: 10 },
        { description: 'Part', quantity: 1, unit_price: 0.2, tax_rate: 10 },
      ],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(amounts(put.body.data)).toEqual({ subtotal: 0.4, tax_amount: 0.04, discount_amount: 0, total_amount: 0.44, balance_amount: 0.44 });
  });

  it('line_items: null on an invoice without line items changes nothing: the subtotal and tax it was given stay', async () => {
    const s = await setup();
    const invoice = await makeInvoice(ctx.app, s, { subtotal: 100, tax_amount: 10 });
    expect(amounts(invoice)).toEqual({ subtotal: 100, tax_amount: 10, discount_amount: 0, total_amount: 110, balance_amount: 110 });
    const patched = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { line_items: null, notes: 'no lines' });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(amounts(patched.body.data)).toEqual({ subtotal: 100, tax_amount: 10, discount_amount: 0, total_amount: 110, balance_amount: 110 });
    expect(patched.body.data).toMatchObject({ line_items: null, notes: 'no lines' });
    const discounted = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { discount_amount: 10, line_items: null });
    expect(amounts(discounted.body.data)).toEqual({ subtotal: 100, tax_amount: 10, discount_amount: 10, total_amount: 100, balance_amount: 100 });
    const read = await api(s, 'GET', `/invoices/${invoice.uuid}`);
    expect(read.body.data).toEqual(discounted.body.data);
  });

  it('keeps payments: the balance follows the new total, Paid when it reaches 0, and never below paid', async () => {
    const s = await setup();
    const invoice = await makeInvoiceOf(ctx.app, s, 100);
    await makePayment(ctx.app, s.company.key, invoice.uuid, 60);
    const discounted = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { discount_amount: 40 });
    expect(discounted.status, JSON.stringify(discounted.body)).toBe(200);
    expect(discounted.body.data).toMatchObject({ total_amount: 60, paid_amount: 60, balance_amount: 0, status: 'Paid' });
    const job = await readJob(ctx.database, s.company.companyId, s.jobUuid);
    expect(job.paidAt).not.toBeNull();
    expectValidationError(await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { discount_amount: 50 }), 'total_amount');
    const reopened = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { discount_amount: 0 });
    expect(reopened.body.data).toMatchObject({ total_amount: 100, paid_amount: 60, balance_amount: 40, status: 'Pending' });
  });

  it('applies the create rules to an amount update', async () => {
    const s = await setup();
    const invoice = await makeInvoiceOf(ctx.app, s, 100);
    const path = `/invoices/${invoice.uuid}`;
    expectValidationError(await api(s, 'PATCH', path, { discount_amount: 100.01 }), 'discount_amount');
    expectValidationError(await api(s, 'PATCH', path, { progress_percentage: 50 }), 'progress_percentage');
    expectValidationError(await api(s, 'PATCH', path, { invoice_type: 'Progress' }), 'progress_percentage');
    const progress = await api(s, 'PATCH', path, { invoice_type: 'Progress', progress_percentage: 25 });
    expect(progress.status, JSON.stringify(progress.body)).toBe(200);
    expect(amounts(progress.body.data)).toMatchObject({ subtotal: 25, total_amount: 25, balance_amount: 25 });
    expectValidationError(await api(s, 'PATCH', path, { customer_uuid: s.customer.uuid }), 'customer_uuid');
    const unchanged = await api(s, 'GET', path);
    expect(unchanged.body.data.total_amount).toBe(25);
  });
});
