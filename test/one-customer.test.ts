import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { createVia, makeCompany, makeCustomer } from './helpers/factories.js';
import { makeJob } from './helpers/jobs-factories.js';
import { flatTemplate, makeTemplate } from './helpers/estimates-factories.js';
import { changedWhileRequestWaits } from './helpers/row-lock.js';

/** One customer per document (DECISIONS.md §8): an estimate or invoice bills the customer of its job and estimate. */
const ctx = await buildTestApp();
const { app } = ctx;

async function twoCustomers() {
  const company = await makeCompany(ctx.database);
  const { key } = company;
  const dana = await makeCustomer(app, key, { first_name: 'Dana' });
  const lee = await makeCustomer(app, key, { first_name: 'Lee' });
  const danasJob = await makeJob(app, key, { customer_uuid: dana.uuid, title: "Dana's boiler" });
  const leesJob = await makeJob(app, key, { customer_uuid: lee.uuid, title: "Lee's sink" });
  const template = await makeTemplate(app, key, flatTemplate({ base_price: 200 }));
  return { key, dana, lee, danasJob, leesJob, template };
}

function expectWrongReference(response: Awaited<ReturnType<typeof call>>, field: string, message: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(400);
  expect(response.body.error.code).toBe('validation_error');
  expect(response.body.error.details).toEqual([{ field, code: 'invalid_reference', message }]);
}

const invoiceBody = (jobUuid: string, customerUuid: string, extra: Record<string, unknown> = {}) => ({
  job_uuid: jobUuid,
  customer_uuid: customerUuid,
  due_date: '2030-01-31',
  line_items: [{ description: 'Labor', unit_price: 100 }],
  ...extra,
});

describe('POST /invoices', () => {
  it("refuses another customer's job, names customer_uuid and changes nothing", async () => {
    const { key, lee, danasJob } = await twoCustomers();
    const response = await call(app, 'POST', '/api/v1/invoices', { key, body: invoiceBody(danasJob.uuid, lee.uuid) });
    expectWrongReference(response, 'customer_uuid', 'must be the customer of the job (job_uuid)');
    expect((await call(app, 'GET', '/api/v1/invoices', { key })).body.data.pagination.total).toBe(0);
    // The job was not moved to Invoiced.
    expect((await call(app, 'GET', `/api/v1/jobs/${danasJob.uuid}`, { key })).body.data.status).toBe('New');
  });

  it("refuses an estimate of another customer, naming customer_uuid", async () => {
    const { key, dana, lee, danasJob, template } = await twoCustomers();
    const leesEstimate = await createVia(app, key, '/estimates', { customer_uuid: lee.uuid, template_uuid: template.uuid });
    const response = await call(app, 'POST', '/api/v1/invoices', {
      key,
      body: invoiceBody(danasJob.uuid, dana.uuid, { estimate_uuid: leesEstimate.uuid, line_items: undefined }),
    });
    expectWrongReference(response, 'customer_uuid', 'must be the customer of the estimate (estimate_uuid)');
  });

  it('bills the customer of its job and estimate', async () => {
    const { key, dana, danasJob, template } = await twoCustomers();
    const estimate = await createVia(app, key, '/estimates', { customer_uuid: dana.uuid, template_uuid: template.uuid, job_uuid: danasJob.uuid });
    const invoice = await createVia(app, key, '/invoices', invoiceBody(danasJob.uuid, dana.uuid, { estimate_uuid: estimate.uuid, line_items: undefined }));
    expect(invoice).toMatchObject({ customer_uuid: dana.uuid, job_uuid: danasJob.uuid, estimate_uuid: estimate.uuid, subtotal: 200 });
  });
});

describe('PATCH /invoices/{uuid}', () => {
  it('answers customer_uuid and estimate_uuid as read-only: they cannot change after create', async () => {
    const { key, dana, lee, danasJob } = await twoCustomers();
    const invoice = await createVia(app, key, '/invoices', invoiceBody(danasJob.uuid, dana.uuid));
    for (const [field, value] of [['customer_uuid', lee.uuid], ['estimate_uuid', null]] as const) {
      const response = await call(app, 'PATCH', `/api/v1/invoices/${invoice.uuid}`, { key, body: { [field]: value } });
      expect(response.status, field).toBe(400);
      expect(response.body.error.details).toEqual([{ field, code: 'read_only', message: 'cannot be changed after create' }]);
    }
    const unchanged = await call(app, 'GET', `/api/v1/invoices/${invoice.uuid}`, { key });
    expect(unchanged.body.data).toMatchObject({ customer_uuid: dana.uuid, job_uuid: danasJob.uuid });
  });

  it("refuses a move to another customer's job, naming job_uuid; a job of its customer is fine", async () => {
    const { key, dana, danasJob, leesJob } = await twoCustomers();
    const invoice = await createVia(app, key, '/invoices', invoiceBody(danasJob.uuid, dana.uuid));
    const moved = await call(app, 'PATCH', `/api/v1/invoices/${invoice.uuid}`, { key, body: { job_uuid: leesJob.uuid } });
    expectWrongReference(moved, 'job_uuid', "must be a job of the invoice's customer (customer_uuid)");
    const danasOtherJob = await makeJob(app, key, { customer_uuid: dana.uuid });
    const response = await call(app, 'PATCH', `/api/v1/invoices/${invoice.uuid}`, { key, body: { job_uuid: danasOtherJob.uuid } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ customer_uuid: dana.uuid, job_uuid: danasOtherJob.uuid });
  });
});

describe('POST /estimates', () => {
  it("refuses another customer's job, naming customer_uuid", async () => {
    const { key, lee, danasJob, template } = await twoCustomers();
    const response = await call(app, 'POST', '/api/v1/estimates', {
      key,
      body: { customer_uuid: lee.uuid, template_uuid: template.uuid, job_uuid: danasJob.uuid },
    });
    expectWrongReference(response, 'customer_uuid', 'must be the customer of the job (job_uuid)');
    expect((await call(app, 'GET', '/api/v1/estimates', { key })).body.data.pagination.total).toBe(0);
  });

  it('still says a missing job is not a record of the company, before comparing customers', async () => {
    const { key, lee, template } = await twoCustomers();
    const response = await call(app, 'POST', '/api/v1/estimates', {
      key,
      body: { customer_uuid: lee.uuid, template_uuid: template.uuid, job_uuid: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70' },
    });
    expectWrongReference(response, 'job_uuid', 'does not refer to an existing record of this company');
  });
});

describe('PATCH /estimates/{uuid}', () => {
  it("refuses a move to another customer's job, naming job_uuid; its customer cannot change", async () => {
    const { key, dana, lee, danasJob, leesJob, template } = await twoCustomers();
    const estimate = await createVia(app, key, '/estimates', { customer_uuid: dana.uuid, template_uuid: template.uuid });
    const moved = await call(app, 'PATCH', `/api/v1/estimates/${estimate.uuid}`, { key, body: { job_uuid: leesJob.uuid } });
    expectWrongReference(moved, 'job_uuid', "must be a job of the estimate's customer (customer_uuid)");
    const recustomered = await call(app, 'PATCH', `/api/v1/estimates/${estimate.uuid}`, { key, body: { customer_uuid: lee.uuid } });
    expect(recustomered.status).toBe(400);
    expect(recustomered.body.error.details).toEqual([{ field: 'customer_uuid', code: 'read_only', message: 'cannot be changed after create' }]);
    expect((await call(app, 'GET', `/api/v1/estimates/${estimate.uuid}`, { key })).body.data).toMatchObject({ customer_uuid: dana.uuid, job_uuid: null });

    // A job of the same customer, the same job again, and none at all are fine.
    for (const jobUuid of [danasJob.uuid, danasJob.uuid, null]) {
      const response = await call(app, 'PATCH', `/api/v1/estimates/${estimate.uuid}`, { key, body: { job_uuid: jobUuid } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.data.job_uuid).toBe(jobUuid);
    }
  });

  it('an accepted estimate bills its own customer: the invoice made from it follows the rule too', async () => {
    const { key, dana, lee, danasJob, leesJob, template } = await twoCustomers();
    const estimate = await createVia(app, key, '/estimates', { customer_uuid: dana.uuid, template_uuid: template.uuid, job_uuid: danasJob.uuid });
    const link = await call(app, 'POST', `/api/v1/estimates/${estimate.uuid}/share_link`, { key });
    expect(link.status).toBe(200);
    const path = new URL(link.body.data.url).pathname;
    const accepted = await call(app, 'POST', `${path}/accept`, { body: { signature_name: 'Dana Reyes' } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect((await call(app, 'GET', `/api/v1/estimates/${estimate.uuid}`, { key })).body.data).toMatchObject({ status: 'Accepted', customer_uuid: dana.uuid, job_uuid: danasJob.uuid });

    const wrong = await call(app, 'POST', '/api/v1/invoices', { key, body: invoiceBody(leesJob.uuid, lee.uuid, { estimate_uuid: estimate.uuid, line_items: undefined }) });
    expectWrongReference(wrong, 'customer_uuid', 'must be the customer of the estimate (estimate_uuid)');
    const invoice = await createVia(app, key, '/invoices', invoiceBody(danasJob.uuid, dana.uuid, { estimate_uuid: estimate.uuid, line_items: undefined }));
    expect(invoice).toMatchObject({ customer_uuid: dana.uuid, estimate: { uuid: estimate.uuid, status: 'Accepted' }, total_amount: 200 });
  });
});

describe('PATCH /jobs/{uuid}', () => {
  it('keeps the customer of a job that has invoices or estimates; a job without documents may change it', async () => {
    const { key, dana, lee, danasJob, leesJob, template } = await twoCustomers();
    await createVia(app, key, '/invoices', invoiceBody(danasJob.uuid, dana.uuid));
    const refused = await call(app, 'PATCH', `/api/v1/jobs/${danasJob.uuid}`, { key, body: { customer_uuid: lee.uuid } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error.details).toEqual([{ field: 'customer_uuid', code: 'invalid', message: expect.any(String) }]);
    expect((await call(app, 'GET', `/api/v1/jobs/${danasJob.uuid}`, { key })).body.data.customer_uuid).toBe(dana.uuid);
    // The same customer again is no change.
    expect((await call(app, 'PATCH', `/api/v1/jobs/${danasJob.uuid}`, { key, body: { customer_uuid: dana.uuid } })).status).toBe(200);
    // An estimate holds the customer too; a job with no document moves freely.
    await createVia(app, key, '/estimates', { customer_uuid: lee.uuid, template_uuid: template.uuid, job_uuid: leesJob.uuid });
    expect((await call(app, 'PATCH', `/api/v1/jobs/${leesJob.uuid}`, { key, body: { customer_uuid: dana.uuid } })).status).toBe(400);
    const bare = await makeJob(app, key, { customer_uuid: dana.uuid });
    const moved = await call(app, 'PATCH', `/api/v1/jobs/${bare.uuid}`, { key, body: { customer_uuid: lee.uuid } });
    expect(moved.status).toBe(200);
    expect(moved.body.data.customer_uuid).toBe(lee.uuid);
  });
});

describe.runIf(Boolean(ctx.databaseUrl))('an estimate naming a job whose customer is changing (PostgreSQL)', () => {
  it('waits for the change and then refuses the job, on create and on update', async () => {
    const { key, dana, lee, danasJob, template } = await twoCustomers();
    // The job is locked by another transaction that gives it to Lee and commits: the estimate waits on the
    // job's row and then finds the new customer.
    const created = await changedWhileRequestWaits(
      ctx.databaseUrl!,
      { table: 'jobs', uuid: danasJob.uuid, change: `update jobs set customer_uuid = '${lee.uuid}' where uuid = $1` },
      () => call(app, 'POST', '/api/v1/estimates', { key, body: { customer_uuid: dana.uuid, template_uuid: template.uuid, job_uuid: danasJob.uuid } }),
    );
    expectWrongReference(created, 'customer_uuid', 'must be the customer of the job (job_uuid)');

    const danasOtherJob = await makeJob(app, key, { customer_uuid: dana.uuid, title: "Dana's other job" });
    const estimate = await createVia(app, key, '/estimates', { customer_uuid: dana.uuid, template_uuid: template.uuid });
    const updated = await changedWhileRequestWaits(
      ctx.databaseUrl!,
      { table: 'jobs', uuid: danasOtherJob.uuid, change: `update jobs set customer_uuid = '${lee.uuid}' where uuid = $1` },
      () => call(app, 'PATCH', `/api/v1/estimates/${estimate.uuid}`, { key, body: { job_uuid: danasOtherJob.uuid } }),
    );
    expect(updated.status, JSON.stringify(updated.body)).toBe(400);
    expect(updated.body.error.details[0]).toMatchObject({ field: 'job_uuid', code: 'invalid_reference' });
    expect((await call(app, 'GET', `/api/v1/estimates/${estimate.uuid}`, { key })).body.data.job_uuid).toBeNull();
  });
});
