import { describe, expect, it } from 'vitest';
import { etagOf } from '../src/shared/etag.js';
import { buildTestApp, call } from './helpers/app.js';
import { insertEstimate, insertJob, makeBillingSetup, makeInvoiceOf, readJob, softDeleteJob, type BillingSetup } from './helpers/billing-factories.js';
import { expectError } from './helpers/conventions.js';
import { eventsOf, storedEventCount } from './helpers/events.js';
import { makeCustomer } from './helpers/factories.js';
import { changedWhileRequestWaits } from './helpers/row-lock.js';

/**
 * An invoice's job_uuid changes by update (PUT and PATCH, both partial), within one customer per document
 * (DECISIONS.md §8): a job of another customer is 400 invalid_reference naming job_uuid.
 */
const ctx = await buildTestApp();
const { app } = ctx;
/** Lock waits are only real on PostgreSQL; PGlite runs one statement at a time. */
const realPostgres = Boolean(ctx.databaseUrl);

const METHODS = ['PATCH', 'PUT'] as const;
const NOT_A_RECORD = 'does not refer to an existing record of this company';
const OTHER_CUSTOMER = "must be a job of the invoice's customer (customer_uuid)";

const api = (s: BillingSetup, method: 'GET' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, headers?: Record<string, string>) =>
  call(app, method, `/api/v1${path}`, { key: s.company.key, body, headers });

/** A company with an invoice of 100 on its first job, a second job of the same customer and one of another customer. */
async function invoiceWithJobs() {
  const s = await makeBillingSetup(app, ctx.database, { status: 'Complete', title: 'Boiler' });
  const sameCustomerJob = await insertJob(ctx.database, s.company.companyId, s.customer.uuid, { status: 'Complete', title: 'Sink' });
  const otherCustomer = await makeCustomer(app, s.company.key, { first_name: 'Lee' });
  const otherCustomerJob = await insertJob(ctx.database, s.company.companyId, otherCustomer.uuid, { status: 'Complete', title: 'Roof' });
  const invoice = await makeInvoiceOf(app, s, 100);
  return { s, invoice, sameCustomerJob, otherCustomer, otherCustomerJob };
}

async function getInvoice(s: BillingSetup, uuid: string) {
  const response = await api(s, 'GET', `/invoices/${uuid}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

function expectJobRefused(response: Awaited<ReturnType<typeof call>>, message: string) {
  expectError(response, 400, 'validation_error', 'job_uuid');
  expect(response.body.error.details).toEqual([{ field: 'job_uuid', code: 'invalid_reference', message }]);
}

describe.each(METHODS)('%s /invoices/{uuid} with job_uuid', (method) => {
  it("moves the invoice to another job of its customer: answer, GET, embedded job and the invoice.updated event; no job's status moves", async () => {
    const { s, invoice, sameCustomerJob } = await invoiceWithJobs();
    expect(invoice).toMatchObject({ job_uuid: s.jobUuid, job: { uuid: s.jobUuid, title: 'Boiler', status: 'Invoiced' } });
    const response = await api(s, method, `/invoices/${invoice.uuid}`, { job_uuid: sameCustomerJob });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({
      job_uuid: sameCustomerJob,
      job: { uuid: sameCustomerJob, title: 'Sink', status: 'Complete' },
      customer_uuid: s.customer.uuid,
      estimate_uuid: null,
      total_amount: 100,
      balance_amount: 100,
      status: 'Pending',
    });
    expect(await getInvoice(s, invoice.uuid)).toEqual(response.body.data);
    expect(response.headers.etag).toBe(etagOf(response.body.data));

    // Only a create moves a job to Invoiced: the new job keeps its status, the old one stays Invoiced.
    expect((await readJob(ctx.database, s.company.companyId, sameCustomerJob)).status).toBe('Complete');
    expect((await readJob(ctx.database, s.company.companyId, s.jobUuid)).status).toBe('Invoiced');

    const events = await eventsOf(app, s.company.key, invoice.uuid, 2);
    expect(events.map((event) => event.type)).toEqual(['invoice.created', 'invoice.updated']);
    expect(events[1].data.previous_attributes).toEqual({ job_uuid: s.jobUuid });
    expect(events[1].data.object).toEqual(response.body.data);
    // Neither job recorded a change: the old one has only its move to Invoiced, the new one nothing.
    expect((await eventsOf(app, s.company.key, s.jobUuid, 1)).map((event) => event.type)).toEqual(['job.updated']);
    expect(await eventsOf(app, s.company.key, sameCustomerJob, 0)).toEqual([]);

    // The invoice lists under its new job.
    const byJob = await api(s, 'GET', `/invoices?job_uuid=${sameCustomerJob}`);
    expect(byJob.body.data.invoices.map((item: { uuid: string }) => item.uuid)).toEqual([invoice.uuid]);
    expect((await api(s, 'GET', `/invoices?job_uuid=${s.jobUuid}`)).body.data.invoices).toEqual([]);
  });

  it("refuses a job of another customer, naming job_uuid (invalid_reference); nothing changes", async () => {
    const { s, invoice, otherCustomerJob } = await invoiceWithJobs();
    const before = await getInvoice(s, invoice.uuid);
    const stored = await storedEventCount(ctx.database, s.company.companyId);
    const response = await api(s, method, `/invoices/${invoice.uuid}`, { job_uuid: otherCustomerJob, notes: 'moved' });
    expectJobRefused(response, OTHER_CUSTOMER);
    expect(await getInvoice(s, invoice.uuid)).toEqual(before);
    expect(await storedEventCount(ctx.database, s.company.companyId)).toBe(stored);
  });

  it("refuses a missing, soft-deleted or other company's job as create does (invalid_reference naming job_uuid)", async () => {
    const { s, invoice } = await invoiceWithJobs();
    const deletedJob = await insertJob(ctx.database, s.company.companyId, s.customer.uuid);
    await softDeleteJob(ctx.database, s.company.companyId, deletedJob);
    const other = await makeBillingSetup(app, ctx.database);
    const before = await getInvoice(s, invoice.uuid);
    for (const jobUuid of ['019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70', deletedJob, other.jobUuid]) {
      expectJobRefused(await api(s, method, `/invoices/${invoice.uuid}`, { job_uuid: jobUuid }), NOT_A_RECORD);
    }
    // The same answer create gives for such a job.
    const onUpdate = await api(s, method, `/invoices/${invoice.uuid}`, { job_uuid: other.jobUuid });
    const onCreate = await call(app, 'POST', '/api/v1/invoices', {
      key: s.company.key,
      body: { job_uuid: other.jobUuid, customer_uuid: s.customer.uuid, due_date: '2099-12-31' },
    });
    expect(onCreate.body.error.details).toEqual(onUpdate.body.error.details);
    expect(await getInvoice(s, invoice.uuid)).toEqual(before);
  });

  it('refuses job_uuid: null (an invoice always has a job) and a malformed id', async () => {
    const { s, invoice } = await invoiceWithJobs();
    const before = await getInvoice(s, invoice.uuid);
    for (const [jobUuid, code] of [[null, 'invalid_type'], ['not-a-uuid', 'invalid_format']] as const) {
      const response = await api(s, method, `/invoices/${invoice.uuid}`, { job_uuid: jobUuid });
      expectError(response, 400, 'validation_error', 'job_uuid');
      expect(response.body.error.details).toEqual([{ field: 'job_uuid', code, message: expect.any(String) }]);
    }
    expect(await getInvoice(s, invoice.uuid)).toEqual(before);
  });

  it('the job it already has is a no-op (in any case); other fields sent with it still apply', async () => {
    const { s, invoice } = await invoiceWithJobs();
    const stored = await storedEventCount(ctx.database, s.company.companyId);
    const same = await api(s, method, `/invoices/${invoice.uuid}`, { job_uuid: s.jobUuid.toUpperCase() });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.body.data).toEqual(invoice);
    expect(await storedEventCount(ctx.database, s.company.companyId)).toBe(stored);

    const withNotes = await api(s, method, `/invoices/${invoice.uuid}`, { job_uuid: s.jobUuid, notes: 'Thanks' });
    expect(withNotes.status, JSON.stringify(withNotes.body)).toBe(200);
    expect(withNotes.body.data).toMatchObject({ job_uuid: s.jobUuid, notes: 'Thanks' });
    const events = await eventsOf(app, s.company.key, invoice.uuid, 2);
    expect(events[1].data.previous_attributes).toEqual({ notes: null });
  });
});

describe('invoice job change: the rest of the update path', () => {
  it('is idempotent by nature: the same move twice answers the same and records one event', async () => {
    const { s, invoice, sameCustomerJob } = await invoiceWithJobs();
    const first = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { job_uuid: sameCustomerJob });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const stored = await storedEventCount(ctx.database, s.company.companyId);
    const again = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { job_uuid: sameCustomerJob });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);
    expect(await storedEventCount(ctx.database, s.company.companyId)).toBe(stored);
  });

  it('honours If-Match: a stale tag is 412 and moves nothing; the current one moves the invoice', async () => {
    const { s, invoice, sameCustomerJob } = await invoiceWithJobs();
    const tag = etagOf(await getInvoice(s, invoice.uuid));
    await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { notes: 'changed' });
    const stale = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { job_uuid: sameCustomerJob }, { 'if-match': tag });
    expectError(stale, 412, 'precondition_failed');
    expect((await getInvoice(s, invoice.uuid)).job_uuid).toBe(s.jobUuid);

    const fresh = etagOf(await getInvoice(s, invoice.uuid));
    const moved = await api(s, 'PUT', `/invoices/${invoice.uuid}`, { job_uuid: sameCustomerJob }, { 'if-match': fresh });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data.job_uuid).toBe(sameCustomerJob);
    expect(moved.headers.etag).not.toBe(fresh);
  });

  it('a soft-deleted invoice is 404, whatever job it is sent', async () => {
    const { s, invoice, sameCustomerJob } = await invoiceWithJobs();
    expect((await api(s, 'DELETE', `/invoices/${invoice.uuid}`)).status).toBe(200);
    for (const method of METHODS) {
      expectError(await api(s, method, `/invoices/${invoice.uuid}`, { job_uuid: sameCustomerJob }), 404, 'not_found');
    }
  });

  it("tenant isolation: another company's invoice is 404 and another company's job is 400; nothing changes", async () => {
    const a = await invoiceWithJobs();
    const b = await invoiceWithJobs();
    for (const method of METHODS) {
      // B cannot reach A's invoice, with its own job or with one of A's.
      for (const jobUuid of [b.sameCustomerJob, a.sameCustomerJob]) {
        expectError(await api(b.s, method, `/invoices/${a.invoice.uuid}`, { job_uuid: jobUuid }), 404, 'not_found');
      }
      // A cannot move its invoice to B's job, even one of a customer with the same details.
      expectJobRefused(await api(a.s, method, `/invoices/${a.invoice.uuid}`, { job_uuid: b.s.jobUuid }), NOT_A_RECORD);
    }
    expect(await getInvoice(a.s, a.invoice.uuid)).toEqual(a.invoice);
    expect(await getInvoice(b.s, b.invoice.uuid)).toEqual(b.invoice);
  });

  it('an invoice with an estimate moves to another job of the customer, the estimate kept', async () => {
    const s = await makeBillingSetup(app, ctx.database, { status: 'Complete' });
    const estimateUuid = await insertEstimate(ctx.database, s.company.companyId, s.company.userId, s.customer.uuid, {
      baseAmount: '80.00',
      addonsAmount: '20.00',
      taxAmount: '0.00',
    });
    const invoice = await makeInvoiceOf(app, s, 100, { estimate_uuid: estimateUuid });
    const sameCustomerJob = await insertJob(ctx.database, s.company.companyId, s.customer.uuid);
    const otherCustomer = await makeCustomer(app, s.company.key);
    const otherCustomerJob = await insertJob(ctx.database, s.company.companyId, otherCustomer.uuid);

    expectJobRefused(await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { job_uuid: otherCustomerJob }), OTHER_CUSTOMER);
    const moved = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, { job_uuid: sameCustomerJob });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data).toMatchObject({ job_uuid: sameCustomerJob, estimate_uuid: estimateUuid, estimate: { uuid: estimateUuid }, total_amount: 100 });
    // customer_uuid and estimate_uuid stay fixed.
    for (const body of [{ customer_uuid: otherCustomer.uuid }, { estimate_uuid: null }]) {
      const refused = await api(s, 'PATCH', `/invoices/${invoice.uuid}`, body);
      expectError(refused, 400, 'validation_error');
      expect(refused.body.error.details).toEqual([{ field: Object.keys(body)[0], code: 'read_only', message: 'cannot be changed after create' }]);
    }
  });

  it('a move that makes the invoice Paid stamps paid_at on the new job, not the old one, and moves no status', async () => {
    const s = await makeBillingSetup(app, ctx.database, { status: 'Complete' });
    const draft = await makeInvoiceOf(app, s, 0, { status: 'Draft' });
    const sameCustomerJob = await insertJob(ctx.database, s.company.companyId, s.customer.uuid, { status: 'Complete' });
    const response = await api(s, 'PATCH', `/invoices/${draft.uuid}`, { job_uuid: sameCustomerJob, status: 'Pending' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ job_uuid: sameCustomerJob, status: 'Paid' });
    const [newJob, oldJob] = await Promise.all([
      readJob(ctx.database, s.company.companyId, sameCustomerJob),
      readJob(ctx.database, s.company.companyId, s.jobUuid),
    ]);
    expect(newJob).toMatchObject({ status: 'Complete', invoicedAt: null });
    expect(newJob.paidAt).toBeInstanceOf(Date);
    expect(oldJob.paidAt).toBeNull();
  });

  it.runIf(realPostgres)("waits for a job whose customer is changing and then refuses it: the rule holds under concurrency", async () => {
    const { s, invoice, sameCustomerJob, otherCustomer } = await invoiceWithJobs();
    // The job is locked by another transaction that moves it to another customer and commits: the update
    // waits on the job's row and then finds the new customer.
    const response = await changedWhileRequestWaits(
      ctx.databaseUrl!,
      { table: 'jobs', uuid: sameCustomerJob, change: `update jobs set customer_uuid = '${otherCustomer.uuid}' where uuid = $1` },
      () => api(s, 'PATCH', `/invoices/${invoice.uuid}`, { job_uuid: sameCustomerJob }),
    );
    expectJobRefused(response, OTHER_CUSTOMER);
    expect((await getInvoice(s, invoice.uuid)).job_uuid).toBe(s.jobUuid);
  });
});
