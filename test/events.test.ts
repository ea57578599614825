import { sql } from 'drizzle-orm';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { describe, expect, inject, it } from 'vitest';
import { addUsage } from '../src/modules/auth/usage.repository.js';
import { deleteExpiredEvents, EventRetention } from '../src/modules/events/event-retention.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeBillingSetup, makeInvoiceOf, makePayment, paymentBody } from './helpers/billing-factories.js';
import { flatTemplate, makeEstimate, makeTemplate } from './helpers/estimates-factories.js';
import { eventsOf, getRecord, readFeed, waitForFeed, type FeedEvent } from './helpers/events.js';
import { makeCompany, makeCustomer, makeLocation, type TestCompany } from './helpers/factories.js';
import { makeJob, PNG_BYTES, uploadPhotos } from './helpers/jobs-factories.js';
import { rowsOf } from './helpers/sql-rows.js';

// Recording is tested here; delivery (which would start attempting the deliveries checked below) elsewhere.
const ctx = await buildTestApp({ env: { WEBHOOK_WORKER_ENABLED: 'false' } });
const { app } = ctx;

async function storedEventCount(companyId: string): Promise<number> {
  const [row] = await rowsOf<{ n: number }>(ctx.database, sql`select count(*)::int as n from events where company_id = ${companyId}`);
  return row.n;
}

async function send(key: string, method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown) {
  const response = await call(app, method, `/api/v1${path}`, { key, body });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

/** The application_name the API's connections carry: its transactions are the ones that hold the feed back. */
async function apiApplicationName(): Promise<string> {
  const [row] = await rowsOf<{ name: string }>(ctx.database, sql`select current_setting('application_name') as name`);
  return row.name;
}

function types(events: FeedEvent[]) {
  return events.map((event) => event.type);
}

/** The last event of a record carries exactly what its GET ?include_deleted=true answers now. */
async function expectCarriesGet(key: string, event: FeedEvent, path: string) {
  expect(event.data.object).toEqual(await getRecord(app, key, path));
}

describe('events of each resource', () => {
  it('customer: created, updated with the changed fields, deleted', async () => {
    const company = await makeCompany(ctx.database);
    const created = await makeCustomer(app, company.key, { email: 'a@example.com' });
    const [first] = await eventsOf(app, company.key, created.uuid, 1);
    expect(first).toMatchObject({ type: 'customer.created', object_type: 'customer', object_uuid: created.uuid });
    expect(first.data).toEqual({ object: created });
    expect(first.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const updated = await send(company.key, 'PATCH', `/customers/${created.uuid}`, { email: 'b@example.com', is_vip: true, notes: null });
    const events = await eventsOf(app, company.key, created.uuid, 2);
    expect(types(events)).toEqual(['customer.created', 'customer.updated']);
    expect(events[1].data.object).toEqual(updated);
    await expectCarriesGet(company.key, events[1], `/customers/${created.uuid}`);
    // notes was already null: unchanged fields and updated_at are left out.
    expect(events[1].data.previous_attributes).toEqual({ email: 'a@example.com', is_vip: false });

    await send(company.key, 'DELETE', `/customers/${created.uuid}`);
    const all = await eventsOf(app, company.key, created.uuid, 3);
    expect(types(all)).toEqual(['customer.created', 'customer.updated', 'customer.deleted']);
    expect(all[2].data.object.deleted_at).toEqual(expect.any(String));
    expect(all[2].data).not.toHaveProperty('previous_attributes');
    await expectCarriesGet(company.key, all[2], `/customers/${created.uuid}`);
  });

  it('location: making one primary records the location that stops being primary', async () => {
    const company = await makeCompany(ctx.database);
    const first = await makeLocation(app, company.key, { is_primary: true });
    const second = await makeLocation(app, company.key, { is_primary: true });
    const firstEvents = await eventsOf(app, company.key, first.uuid, 2);
    expect(types(firstEvents)).toEqual(['location.created', 'location.updated']);
    expect(firstEvents[1].data.previous_attributes).toEqual({ is_primary: true });
    expect(firstEvents[1].data.object.is_primary).toBe(false);
    await expectCarriesGet(company.key, firstEvents[1], `/locations/${first.uuid}`);
    // The side effect moved updated_at too.
    expect(firstEvents[1].data.object.updated_at > first.updated_at).toBe(true);

    const third = await makeLocation(app, company.key);
    await send(company.key, 'PUT', `/locations/${third.uuid}`, { is_primary: true, name: 'Main' });
    const thirdEvents = await eventsOf(app, company.key, third.uuid, 2);
    expect(thirdEvents[1].data.previous_attributes).toEqual({ is_primary: false, name: third.name });
    const secondEvents = await eventsOf(app, company.key, second.uuid, 2);
    expect(secondEvents[1].data.previous_attributes).toEqual({ is_primary: true });
    await expectCarriesGet(company.key, secondEvents[1], `/locations/${second.uuid}`);

    await send(company.key, 'DELETE', `/locations/${first.uuid}`);
    const deleted = await eventsOf(app, company.key, first.uuid, 3);
    expect(deleted[2].type).toBe('location.deleted');
    await expectCarriesGet(company.key, deleted[2], `/locations/${first.uuid}`);
  });

  it('job: created with its embeds, updated (status timestamps), deleted', async () => {
    const company = await makeCompany(ctx.database);
    const job = await makeJob(app, company.key);
    const [created] = await eventsOf(app, company.key, job.uuid, 1);
    expect(created.type).toBe('job.created');
    expect(created.data.object).toEqual(job);
    await expectCarriesGet(company.key, created, `/jobs/${job.uuid}`);

    const moved = await send(company.key, 'PATCH', `/jobs/${job.uuid}`, { status: 'In Progress' });
    const events = await eventsOf(app, company.key, job.uuid, 2);
    expect(events[1].data.object).toEqual(moved);
    expect(events[1].data.previous_attributes).toEqual({ status: 'New', started_at: null });

    await send(company.key, 'DELETE', `/jobs/${job.uuid}`);
    const all = await eventsOf(app, company.key, job.uuid, 3);
    expect(types(all)).toEqual(['job.created', 'job.updated', 'job.deleted']);
    await expectCarriesGet(company.key, all[2], `/jobs/${job.uuid}`);
  });

  it('template and estimate: created, updated, deleted', async () => {
    const company = await makeCompany(ctx.database);
    const template = await makeTemplate(app, company.key, flatTemplate({ base_price: 100 }));
    await send(company.key, 'PATCH', `/templates/${template.uuid}`, { base_price: 120.5, tax_rate: 8.25 });
    const templateEvents = await eventsOf(app, company.key, template.uuid, 2);
    expect(types(templateEvents)).toEqual(['template.created', 'template.updated']);
    expect(templateEvents[0].data.object).toEqual(template);
    expect(templateEvents[1].data.previous_attributes).toEqual({ base_price: 100, tax_rate: 0 });
    await expectCarriesGet(company.key, templateEvents[1], `/templates/${template.uuid}`);

    const customer = await makeCustomer(app, company.key);
    const estimate = await makeEstimate(app, company.key, { customer_uuid: customer.uuid, template_uuid: template.uuid, quantity: 2 });
    await send(company.key, 'PATCH', `/estimates/${estimate.uuid}`, { quantity: 3 });
    await send(company.key, 'DELETE', `/estimates/${estimate.uuid}`);
    await send(company.key, 'DELETE', `/templates/${template.uuid}`);
    const estimateEvents = await eventsOf(app, company.key, estimate.uuid, 3);
    expect(types(estimateEvents)).toEqual(['estimate.created', 'estimate.updated', 'estimate.deleted']);
    expect(estimateEvents[0].data.object).toEqual(estimate);
    expect(estimateEvents[1].data.previous_attributes).toEqual({
      quantity: 2,
      base_amount: 241,
      total_amount: estimate.total_amount,
      tax_amount: estimate.tax_amount,
    });
    await expectCarriesGet(company.key, estimateEvents[2], `/estimates/${estimate.uuid}`);
    const templateAll = await eventsOf(app, company.key, template.uuid, 3);
    expect(templateAll[2].type).toBe('template.deleted');
  });

  it('invoice and payment side effects: job invoiced, invoice settled and paid, refund and deleted payment re-settle', async () => {
    const setup = await makeBillingSetup(app, ctx.database, { status: 'Complete' });
    const { key } = setup.company;
    const invoice = await makeInvoiceOf(app, setup, 100);
    const jobEvents = await eventsOf(app, key, setup.jobUuid, 1);
    expect(types(jobEvents)).toEqual(['job.updated']);
    expect(jobEvents[0].data.previous_attributes).toEqual({ status: 'Complete', invoiced_at: null });
    await expectCarriesGet(key, jobEvents[0], `/jobs/${setup.jobUuid}`);
    const [invoiceCreated] = await eventsOf(app, key, invoice.uuid, 1);
    expect(invoiceCreated.type).toBe('invoice.created');
    expect(invoiceCreated.data.object).toEqual(invoice);

    // A partial payment: payment.created and invoice.updated, the job untouched.
    const partial = await makePayment(app, key, invoice.uuid, 40);
    let invoiceEvents = await eventsOf(app, key, invoice.uuid, 2);
    expect(invoiceEvents[1].type).toBe('invoice.updated');
    expect(invoiceEvents[1].data.previous_attributes).toEqual({ paid_amount: 0, balance_amount: 100 });
    const [paymentCreated] = await eventsOf(app, key, partial.uuid, 1);
    expect(paymentCreated.type).toBe('payment.created');
    expect(paymentCreated.data.object).toEqual(partial);

    // The rest: the invoice becomes Paid and the job gets paid_at.
    const rest = await makePayment(app, key, invoice.uuid, 60);
    invoiceEvents = await eventsOf(app, key, invoice.uuid, 3);
    expect(invoiceEvents[2].data.previous_attributes).toEqual({ paid_amount: 40, balance_amount: 60, status: 'Pending' });
    expect(invoiceEvents[2].data.object.status).toBe('Paid');
    const paidJob = await eventsOf(app, key, setup.jobUuid, 2);
    expect(paidJob[1].data.previous_attributes).toEqual({ paid_at: null });
    await expectCarriesGet(key, paidJob[1], `/jobs/${setup.jobUuid}`);

    // A refund re-opens the invoice.
    await send(key, 'PATCH', `/payments/${rest.uuid}`, { status: 'Refunded' });
    const restEvents = await eventsOf(app, key, rest.uuid, 2);
    expect(restEvents[1].data.previous_attributes).toEqual({ status: 'Completed' });
    await expectCarriesGet(key, restEvents[1], `/payments/${rest.uuid}`);
    invoiceEvents = await eventsOf(app, key, invoice.uuid, 4);
    expect(invoiceEvents[3].data.previous_attributes).toEqual({ paid_amount: 100, balance_amount: 0, status: 'Paid' });

    // A deleted payment stops counting.
    await send(key, 'DELETE', `/payments/${partial.uuid}`);
    const partialEvents = await eventsOf(app, key, partial.uuid, 2);
    expect(partialEvents[1].type).toBe('payment.deleted');
    await expectCarriesGet(key, partialEvents[1], `/payments/${partial.uuid}`);
    invoiceEvents = await eventsOf(app, key, invoice.uuid, 5);
    expect(invoiceEvents[4].data.previous_attributes).toEqual({ paid_amount: 40, balance_amount: 60 });
    await expectCarriesGet(key, invoiceEvents[4], `/invoices/${invoice.uuid}`);

    await send(key, 'PATCH', `/invoices/${invoice.uuid}`, { notes: 'Thanks' });
    await send(key, 'DELETE', `/invoices/${invoice.uuid}`);
    invoiceEvents = await eventsOf(app, key, invoice.uuid, 7);
    expect(types(invoiceEvents).slice(5)).toEqual(['invoice.updated', 'invoice.deleted']);
    expect(invoiceEvents[5].data.previous_attributes).toEqual({ notes: null });
    await expectCarriesGet(key, invoiceEvents[6], `/invoices/${invoice.uuid}`);
  });

  it('a zero-total invoice is Paid at once: invoice.created and one job.updated with invoiced_at and paid_at', async () => {
    const setup = await makeBillingSetup(app, ctx.database, { status: 'Complete' });
    await makeInvoiceOf(app, setup, 0);
    const jobEvents = await eventsOf(app, setup.company.key, setup.jobUuid, 1);
    expect(jobEvents).toHaveLength(1);
    expect(jobEvents[0].data.previous_attributes).toEqual({ status: 'Complete', invoiced_at: null, paid_at: null });
  });

  it('photos: an upload records one job_photo.created per file; delete records job_photo.deleted', async () => {
    const company = await makeCompany(ctx.database);
    const job = await makeJob(app, company.key);
    const upload = await uploadPhotos(app, company.key, job.uuid, [
      { name: 'a.png', bytes: PNG_BYTES },
      { name: 'b.png', bytes: PNG_BYTES },
    ]);
    expect(upload.status).toBe(200);
    const photos = upload.body.data.photos as Array<{ uuid: string }>;
    const events = await waitForFeed(app, company.key, 3, { type: 'job_photo.created,job_photo.deleted,job.created' });
    expect(types(events)).toEqual(['job.created', 'job_photo.created', 'job_photo.created']);
    expect(events.slice(1).map((event) => event.object_uuid)).toEqual(photos.map((photo) => photo.uuid));
    const path = `/jobs/${job.uuid}/photos/${photos[0].uuid}`;
    const { photo_url: url, ...rest } = events[1].data.object;
    const { photo_url: _current, ...expected } = await getRecord(app, company.key, path);
    expect(rest).toEqual(expected);
    expect(url).toEqual(expect.stringMatching(/^http/));

    await send(company.key, 'DELETE', path);
    const deleted = await eventsOf(app, company.key, photos[0].uuid, 2);
    expect(deleted[1].type).toBe('job_photo.deleted');
    expect(deleted[1].data.object.deleted_at).toEqual(expect.any(String));
  });

  it('a rolled-back write leaves no event (an overpayment is 400)', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const invoice = await makeInvoiceOf(app, setup, 50);
    const before = await waitForFeed(app, setup.company.key, await storedEventCount(setup.company.companyId));
    const refused = await call(app, 'POST', '/api/v1/payments', { key: setup.company.key, body: paymentBody(invoice.uuid, 50.01) });
    expect(refused.status).toBe(400);
    const refusedUpdate = await call(app, 'PATCH', `/api/v1/invoices/${invoice.uuid}`, {
      key: setup.company.key,
      body: { status: 'Paid' },
    });
    expect(refusedUpdate.status).toBe(400);
    // A later committed write becomes visible: everything before it is settled, and nothing was added.
    const customer = await makeCustomer(app, setup.company.key);
    const after = await waitForFeed(app, setup.company.key, before.length + 1);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((event) => event.object_uuid)).toEqual([customer.uuid]);
    expect(await storedEventCount(setup.company.companyId)).toBe(after.length);
  });
});

describe('webhook deliveries of an event', () => {
  it('one pending delivery per live, enabled endpoint that subscribes to the event type, in the same transaction', async () => {
    const company = await makeCompany(ctx.database);
    const endpoint = async (events: string[], options: { enabled?: boolean; deleted?: boolean } = {}) => {
      const uuid = uuidv7();
      await ctx.database.db.execute(sql`
        insert into webhook_endpoints (company_id, uuid, url, events, enabled, secret, deleted_at)
        values (${company.companyId}, ${uuid}, 'https://example.com/hook', ${`{${events.join(',')}}`}::text[], ${options.enabled ?? true}, 'whsec_x',
          ${options.deleted ? new Date().toISOString() : null}::timestamptz)`);
      return uuid;
    };
    const all = await endpoint(['*']);
    const created = await endpoint(['customer.created', 'job.created']);
    await endpoint(['invoice.created']);
    await endpoint(['*'], { enabled: false });
    await endpoint(['*'], { deleted: true });
    const customer = await makeCustomer(app, company.key);
    await send(company.key, 'PATCH', `/customers/${customer.uuid}`, { notes: 'x' });
    const [createdEvent, updatedEvent] = await eventsOf(app, company.key, customer.uuid, 2);
    const deliveries = await rowsOf<{ endpoint_uuid: string; event_uuid: string; event_type: string; status: string; attempts: number; uuid: string }>(
      ctx.database,
      sql`select endpoint_uuid, event_uuid, event_type, status, attempts, uuid from webhook_deliveries where company_id = ${company.companyId} order by event_type, endpoint_uuid`,
    );
    expect(deliveries.map(({ endpoint_uuid, event_uuid, event_type, status, attempts }) => ({ endpoint_uuid, event_uuid, event_type, status, attempts }))).toEqual(
      [
        { endpoint_uuid: all, event_uuid: createdEvent.uuid, event_type: 'customer.created', status: 'pending', attempts: 0 },
        { endpoint_uuid: created, event_uuid: createdEvent.uuid, event_type: 'customer.created', status: 'pending', attempts: 0 },
        { endpoint_uuid: all, event_uuid: updatedEvent.uuid, event_type: 'customer.updated', status: 'pending', attempts: 0 },
      ].sort((a, b) => (a.event_type === b.event_type ? (a.endpoint_uuid < b.endpoint_uuid ? -1 : 1) : a.event_type < b.event_type ? -1 : 1)),
    );
    expect(new Set(deliveries.map((delivery) => delivery.uuid)).size).toBe(3);
    expect(deliveries.every((delivery) => delivery.uuid[14] === '7')).toBe(true);
  });
});

describe('every write route records its events', () => {
  /** Writes that change no recorded object. */
  const UNRECORDED = new Set([
    'POST /api/v1/estimates/preview',
    'POST /api/v1/invoices/preview',
    'PUT /api/v1/numbering',
    // A share link is signed, not stored.
    'POST /api/v1/estimates/{uuid}/share_link',
    'POST /api/v1/invoices/{uuid}/share_link',
    // Webhook endpoints and deliveries are not among the event objects (DECISIONS §9.1).
    'POST /api/v1/webhook_endpoints',
    'PUT /api/v1/webhook_endpoints/{uuid}',
    'PATCH /api/v1/webhook_endpoints/{uuid}',
    'DELETE /api/v1/webhook_endpoints/{uuid}',
    'POST /api/v1/webhook_endpoints/{uuid}/deliveries/{delivery_uuid}/retry',
    // Keys are not among the event objects either (DECISIONS §12); emptying the sandbox removes its events too.
    'POST /api/v1/api_keys',
    'PUT /api/v1/api_keys/{uuid}',
    'PATCH /api/v1/api_keys/{uuid}',
    'DELETE /api/v1/api_keys/{uuid}',
    'POST /api/v1/api_keys/{uuid}/roll',
    'DELETE /api/v1/sandbox',
    // Calendar links are credentials, not event objects (DECISIONS §13).
    'POST /api/v1/users/{user_id}/calendar_link',
    'DELETE /api/v1/users/{user_id}/calendar_link',
  ]);
  /** Writes that need a mail server: their events (job.updated, invoice.updated) are checked in documents.test.ts. */
  const COVERED_ELSEWHERE = new Set(['POST /api/v1/estimates/{uuid}/send', 'POST /api/v1/invoices/{uuid}/send']);

  it('each POST, PUT, PATCH and DELETE of the route table records an event of its object', async () => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const writes: string[] = [];
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations)) {
        if (['post', 'put', 'patch', 'delete'].includes(method)) writes.push(`${method.toUpperCase()} ${path}`);
      }
    }
    const company = await makeCompany(ctx.database);
    const { key } = company;
    const customer = await makeCustomer(app, key);
    const setup = { company, customer, jobUuid: (await makeJob(app, key, { customer_uuid: customer.uuid })).uuid };
    const template = await makeTemplate(app, key);
    let timeOffDays = 0;
    const fresh = {
      location: async () => (await makeLocation(app, key)).uuid,
      customer: async () => (await makeCustomer(app, key)).uuid,
      job: async () => (await makeJob(app, key)).uuid,
      template: async () => (await makeTemplate(app, key)).uuid,
      estimate: async () => (await makeEstimate(app, key, { customer_uuid: setup.customer.uuid, template_uuid: template.uuid })).uuid,
      invoice: async () => (await makeInvoiceOf(app, setup as never, 500)).uuid,
      payment: async () => (await makePayment(app, key, (await makeInvoiceOf(app, setup as never, 500)).uuid, 1)).uuid,
      visit: async () => (await send(key, 'POST', '/visits', { job_uuid: setup.jobUuid, starts_at: '2030-01-01T10:00:00Z', ends_at: '2030-01-01T11:00:00Z' })).uuid,
      // One day each, so no two entries of the user overlap.
      time_off: async () => {
        const day = new Date(Date.UTC(2030, 0, 1 + timeOffDays++)).toISOString();
        const next = new Date(Date.UTC(2030, 0, 1 + timeOffDays)).toISOString();
        return (await send(key, 'POST', '/time_off', { user_id: company.userId, starts_at: day, ends_at: next })).uuid;
      },
    };
    const bodies: Record<string, Record<string, unknown>> = {
      location: { name: 'Renamed' },
      customer: { notes: 'Changed' },
      job: { title: 'Changed' },
      template: { name: 'Changed' },
      estimate: { customer_notes: 'Changed' },
      invoice: { notes: 'Changed' },
      payment: { notes: 'Changed' },
      visit: { title: 'Changed' },
      time_off: { reason: 'Changed' },
    };
    const collections: Record<string, keyof typeof fresh> = {
      '/api/v1/locations': 'location',
      '/api/v1/customers': 'customer',
      '/api/v1/jobs': 'job',
      '/api/v1/templates': 'template',
      '/api/v1/estimates': 'estimate',
      '/api/v1/invoices': 'invoice',
      '/api/v1/payments': 'payment',
      '/api/v1/visits': 'visit',
      '/api/v1/time_off': 'time_off',
    };

    /**
     * The record's events once `count` are visible hold one of `type` (the feed may show an event a moment
     * after its commit, while a transaction of this database that started before it is still running).
     */
    async function expectRecorded(objectUuid: string, type: string, count = 1) {
      const events = await eventsOf(app, key, objectUuid, count);
      expect(types(events), `${type} of ${objectUuid}`).toContain(type);
    }

    const checked: string[] = [];
    for (const write of writes) {
      if (UNRECORDED.has(write) || COVERED_ELSEWHERE.has(write)) continue;
      const [method, path] = write.split(' ');
      const collection = Object.keys(collections).find((prefix) => path === prefix || path === `${prefix}/{uuid}`);
      if (collection) {
        const object = collections[collection];
        if (method === 'POST') {
          await expectRecorded(await fresh[object](), `${object}.created`);
        } else {
          const uuid = await fresh[object]();
          await send(key, method as 'PUT', `${collection.replace('/api/v1', '')}/${uuid}`, method === 'DELETE' ? undefined : bodies[object]);
          await expectRecorded(uuid, `${object}.${method === 'DELETE' ? 'deleted' : 'updated'}`, 2);
        }
      } else if (write === 'POST /api/v1/jobs/{job_uuid}/photos') {
        const upload = await uploadPhotos(app, key, setup.jobUuid, [{ name: 'a.png', bytes: PNG_BYTES }]);
        await expectRecorded(upload.body.data.photos[0].uuid, 'job_photo.created');
      } else if (write === 'DELETE /api/v1/jobs/{job_uuid}/photos/{photo_uuid}') {
        const upload = await uploadPhotos(app, key, setup.jobUuid, [{ name: 'a.png', bytes: PNG_BYTES }]);
        const photoUuid = upload.body.data.photos[0].uuid;
        await send(key, 'DELETE', `/jobs/${setup.jobUuid}/photos/${photoUuid}`);
        await expectRecorded(photoUuid, 'job_photo.deleted', 2);
      } else if (write === 'POST /share/estimates/{token}/accept' || write === 'POST /share/estimates/{token}/decline') {
        const estimateUuid = await fresh.estimate();
        const link = await send(key, 'POST', `/estimates/${estimateUuid}/share_link`);
        const pagePath = new URL(link.url).pathname;
        const answer = write.endsWith('accept') ? { signature_name: 'Dana Reyes' } : { response_notes: 'Not now' };
        const answered = await app.inject({ method: 'POST', url: `${pagePath}/${write.endsWith('accept') ? 'accept' : 'decline'}`, payload: answer });
        expect(answered.statusCode, answered.body).toBe(200);
        await expectRecorded(estimateUuid, 'estimate.updated', 2);
      } else {
        throw new Error(`${write} is a write route no test covers: record its events (recordChanges) and add it here`);
      }
      checked.push(write);
    }
    // 9 resources x (create, PUT, PATCH, DELETE), the two photo writes and the customer's accept and decline.
    expect(checked).toHaveLength(40);
  });
});

describe('GET /api/v1/events', () => {
  it('pages oldest first with has_more and after; type and object_uuid filter', async () => {
    const company = await makeCompany(ctx.database);
    const customers = [];
    for (let i = 0; i < 5; i++) customers.push(await makeCustomer(app, company.key));
    await send(company.key, 'PATCH', `/customers/${customers[0].uuid}`, { notes: 'x' });
    const all = await waitForFeed(app, company.key, 6);
    expect(all.map((event) => event.object_uuid)).toEqual([...customers.map((customer) => customer.uuid), customers[0].uuid]);

    const first = await call(app, 'GET', '/api/v1/events?limit=2', { key: company.key });
    expect(first.body.data.events.map((event: FeedEvent) => event.uuid)).toEqual(all.slice(0, 2).map((event) => event.uuid));
    expect(first.body.data.has_more).toBe(true);
    const next = await call(app, 'GET', `/api/v1/events?limit=2&after=${all[1].uuid}`, { key: company.key });
    expect(next.body.data.events.map((event: FeedEvent) => event.uuid)).toEqual(all.slice(2, 4).map((event) => event.uuid));
    const last = await call(app, 'GET', `/api/v1/events?after=${all[4].uuid}`, { key: company.key });
    expect(last.body.data).toEqual({ events: [all[5]], has_more: false });
    const end = await call(app, 'GET', `/api/v1/events?after=${all[5].uuid}`, { key: company.key });
    expect(end.body.data).toEqual({ events: [], has_more: false });
    const defaultPage = await call(app, 'GET', '/api/v1/events', { key: company.key });
    expect(defaultPage.body.data.events).toEqual(all);

    const updates = await readFeed(app, company.key, { type: 'customer.updated' });
    expect(updates.map((event) => event.uuid)).toEqual([all[5].uuid]);
    const both = await readFeed(app, company.key, { type: 'customer.updated, customer.created' });
    expect(both).toHaveLength(6);
    const ofOne = await readFeed(app, company.key, { object_uuid: customers[0].uuid });
    expect(ofOne.map((event) => event.uuid)).toEqual([all[0].uuid, all[5].uuid]);

    const one = await call(app, 'GET', `/api/v1/events/${all[5].uuid}`, { key: company.key });
    expect(one.status).toBe(200);
    expect(one.body.data).toEqual(all[5]);
  });

  it('validates every parameter', async () => {
    const company = await makeCompany(ctx.database);
    const other = await makeCompany(ctx.database);
    await makeCustomer(app, other.key);
    const [foreign] = await waitForFeed(app, other.key, 1);
    const cases: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['type=customer.renamed', 'type'],
      ['type=customer.created,nope', 'type'],
      ['type=', 'type'],
      [`type=${'customer.created,'.repeat(120)}customer.created`, 'type'],
      ['object_uuid=123', 'object_uuid'],
      ['after=not-a-uuid', 'after'],
      [`after=${uuidv7()}`, 'after'],
      [`after=${foreign.uuid}`, 'after'],
      ['page=2', 'page'],
      ['include_deleted=true', 'include_deleted'],
      ['sort=created_at', 'sort'],
    ];
    for (const [query, field] of cases) {
      const response = await call(app, 'GET', `/api/v1/events?${query}`, { key: company.key });
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(JSON.stringify(response.body.error), query).toContain(field);
    }
    // An unknown type is invalid_enum, and that code's message lists the allowed values.
    const unknownType = await call(app, 'GET', '/api/v1/events?type=customer.created,customer.renamed', { key: company.key });
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.error.details).toEqual([{ field: 'type', code: 'invalid_enum', message: expect.stringContaining("'customer.renamed'") }]);
    for (const allowed of ['customer.created', 'job_photo.deleted', 'visit.updated', 'time_off.created']) {
      expect(unknownType.body.error.details[0].message).toContain(allowed);
    }
    expect((await call(app, 'GET', '/api/v1/events/not-a-uuid', { key: company.key })).status).toBe(400);
    expect((await call(app, 'GET', '/api/v1/events?limit=1', {})).status).toBe(401);
  });

  it('isolates companies: another company\'s events are neither listed nor readable', async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const customer = await makeCustomer(app, a.key);
    const [event] = await eventsOf(app, a.key, customer.uuid, 1);
    expect((await call(app, 'GET', `/api/v1/events/${event.uuid}`, { key: b.key })).status).toBe(404);
    expect((await call(app, 'GET', `/api/v1/events/${uuidv7()}`, { key: a.key })).status).toBe(404);
    expect(await readFeed(app, b.key)).toEqual([]);
    expect(await readFeed(app, b.key, { object_uuid: customer.uuid })).toEqual([]);
  });
});

/** A connection whose transactions are the API's: the same database and application_name as its own. */
async function apiClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: ctx.databaseUrl, application_name: await apiApplicationName() });
  await client.connect();
  return client;
}

/** A customer.updated event written by hand in the client's transaction, as the API writes one. */
function insertCustomerEvent(client: pg.Client, companyId: string, eventUuid: string, customerUuid: string) {
  return client.query(
    `insert into events (company_id, uuid, type, object_type, object_uuid, data) values ($1, $2, 'customer.updated', 'customer', $3, '{"object":{}}')`,
    [companyId, eventUuid, customerUuid],
  );
}

describe.skipIf(!ctx.databaseUrl)('gap-free order (PostgreSQL)', () => {
  it('an event is not visible before its commit, nor is any event committed after it started', async () => {
    const company = await makeCompany(ctx.database);
    const early = await makeCustomer(app, company.key);
    await eventsOf(app, company.key, early.uuid, 1);
    const client = await apiClient();
    try {
      await client.query('begin');
      const heldUuid = uuidv7();
      await insertCustomerEvent(client, company.companyId, heldUuid, early.uuid);
      // Committed later than the held insert started: it must wait behind it.
      const late = await makeCustomer(app, company.key);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const during = await readFeed(app, company.key);
      expect(during.map((event) => event.object_uuid)).toEqual([early.uuid]);
      expect(await storedEventCount(company.companyId)).toBe(2);
      await client.query('commit');
      const after = await waitForFeed(app, company.key, 3);
      expect(after.map((event) => event.uuid)).toEqual([(during[0] as FeedEvent).uuid, heldUuid, after[2].uuid]);
      expect(after[2].object_uuid).toBe(late.uuid);
    } finally {
      await client.end();
    }
  });

  it('places a change made after waiting for a record after the change it waited for, though its transaction id is older', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await makeCustomer(app, company.key);
    await eventsOf(app, company.key, customer.uuid, 1);
    // A transaction of the API that got its id first (an earlier write, or a row lock it then waited on)...
    const client = await apiClient();
    try {
      await client.query('begin');
      await client.query('select pg_current_xact_id()');
      // ...while a later one changes the record and commits first...
      await send(company.key, 'PATCH', `/customers/${customer.uuid}`, { notes: 'first change' });
      // ...then changes the record itself, over the committed change, and records its event.
      await client.query(`update customers set notes = 'second change' where company_id = $1 and uuid = $2`, [company.companyId, customer.uuid]);
      const secondUuid = uuidv7();
      await insertCustomerEvent(client, company.companyId, secondUuid, customer.uuid);
      await client.query('commit');
      const events = await eventsOf(app, company.key, customer.uuid, 3);
      // Feed order is the order of the changes: the record's last event is its last change.
      expect(events.map((event) => event.type)).toEqual(['customer.created', 'customer.updated', 'customer.updated']);
      expect(events[1].data.object.notes).toBe('first change');
      expect(events[2].uuid).toBe(secondUuid);
    } finally {
      await client.end();
    }
  });

  it('orders the events of one record as its changes, under concurrent payments of one invoice and updates of one customer', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key } = setup.company;
    for (let round = 0; round < 4; round++) {
      const invoice = await makeInvoiceOf(app, setup, 1000);
      const customer = await makeCustomer(app, key);
      // Each request waits on the record's row for the one before it; the order they get it in is the
      // order of the changes, whatever the order their transactions got their ids in.
      await Promise.all([
        ...Array.from({ length: 10 }, () => send(key, 'POST', '/payments', paymentBody(invoice.uuid, 50))),
        ...Array.from({ length: 10 }, (_, index) => send(key, 'PATCH', `/customers/${customer.uuid}`, { notes: `change ${index}` })),
      ]);
      const invoiceEvents = await eventsOf(app, key, invoice.uuid, 11);
      const paid = invoiceEvents.map((event) => event.data.object.paid_amount as number);
      expect(paid, `round ${round}: the invoice's paid_amount in feed order`).toEqual([0, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500]);
      expect(invoiceEvents.at(-1)!.data.object).toEqual(await getRecord(app, key, `/invoices/${invoice.uuid}`));
      const customerEvents = await eventsOf(app, key, customer.uuid, 11);
      const updatedAt = customerEvents.map((event) => event.data.object.updated_at as string);
      expect(updatedAt, `round ${round}: the customer's updated_at in feed order`).toEqual([...updatedAt].sort());
      for (const [index, event] of customerEvents.entries()) {
        if (index > 0) expect(event.data.previous_attributes?.notes, `round ${round}, event ${index}`).toBe(customerEvents[index - 1].data.object.notes);
      }
      expect(customerEvents.at(-1)!.data.object).toEqual(await getRecord(app, key, `/customers/${customer.uuid}`));
    }
  }, 60_000);

  /** A write transaction held open on its own connection (it has a transaction id) while `run` runs. */
  async function whileHeldOpen(connection: pg.ClientConfig, run: () => Promise<void>) {
    const client = new pg.Client(connection);
    await client.connect();
    try {
      await client.query('begin');
      await client.query('select pg_current_xact_id()');
      await run();
    } finally {
      await client.query('rollback').catch(() => undefined);
      await client.end();
    }
  }

  /** The follower sees a new record's event within 2 s of its commit (DECISIONS §9.1, §11). */
  async function expectVisibleWithin2s(company: TestCompany) {
    const customer = await makeCustomer(app, company.key);
    const committed = Date.now();
    const events = await waitForFeed(app, company.key, 1, { object_uuid: customer.uuid }, 2_000);
    expect(events.map((event) => event.type)).toEqual(['customer.created']);
    expect(Date.now() - committed).toBeLessThan(2_000);
  }

  it('a transaction held open in another database does not delay the feed', async () => {
    const company = await makeCompany(ctx.database);
    // The server's maintenance database: another database on the same PostgreSQL server.
    await whileHeldOpen({ connectionString: inject('databaseServerUrl'), application_name: await apiApplicationName() }, () =>
      expectVisibleWithin2s(company),
    );
  });

  it('shows a change committed before the read while transactions of another database start and end around it', async () => {
    const company = await makeCompany(ctx.database);
    // Short write transactions in another database, many ending while a feed read runs: one that ends
    // between the read's snapshot and its look at the server's activity must not hide what committed before.
    const churners = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const client = new pg.Client({ connectionString: inject('databaseServerUrl'), application_name: await apiApplicationName() });
        await client.connect();
        return client;
      }),
    );
    let churning = true;
    const churn = churners.map(async (client) => {
      while (churning) {
        await client.query('begin');
        await client.query('select pg_current_xact_id()');
        await client.query('select pg_sleep(random() * 0.004)');
        await client.query('commit');
      }
    });
    try {
      let seen = 0;
      for (let round = 0; round < 60; round++) {
        const customer = await makeCustomer(app, company.key);
        const events = await readFeed(app, company.key, { object_uuid: customer.uuid });
        expect(types(events), `round ${round}`).toEqual(['customer.created']);
        // Nor does a read show fewer events than the one before it.
        const all = await readFeed(app, company.key);
        expect(all.length).toBeGreaterThanOrEqual(seen);
        seen = all.length;
      }
    } finally {
      churning = false;
      await Promise.all(churn);
      await Promise.all(churners.map((client) => client.end()));
    }
  });

  it('bookkeeping writes of the API itself (usage counts, keys last used) do not hold the feed', async () => {
    const [company, other] = [await makeCompany(ctx.database), await makeCompany(ctx.database)];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const holding = new Promise<void>((resolve) => (written = resolve));
    const held = ctx.database.db.transaction(async (tx) => {
      await addUsage(tx, other.companyId, '2026-11', uuidv7(), 1);
      written();
      await released;
    });
    try {
      await holding;
      const customer = await makeCustomer(app, company.key);
      expect(types(await readFeed(app, company.key, { object_uuid: customer.uuid }))).toEqual(['customer.created']);
    } finally {
      release();
      await held;
    }
  });

  it('a transaction held open in this database by another application (it writes no events) does not delay the feed', async () => {
    const company = await makeCompany(ctx.database);
    await whileHeldOpen({ connectionString: ctx.databaseUrl, application_name: 'nightly-report' }, async () => {
      await expectVisibleWithin2s(company);
      // And a follower that read up to here misses nothing once it commits: the other program wrote no event.
      expect((await readFeed(app, company.key)).length).toBe(await storedEventCount(company.companyId));
    });
  });

  it('a follower paging with after during 60 concurrent mixed writes sees every event exactly once, in order', async () => {
    const setup = await makeBillingSetup(app, ctx.database);
    const { key, companyId } = setup.company;
    const invoice = await makeInvoiceOf(app, setup, 10_000);
    const seen: FeedEvent[] = [];
    let after: string | undefined;
    let writing = true;
    const follow = async () => {
      for (;;) {
        const response = await call(app, 'GET', `/api/v1/events?limit=7${after ? `&after=${after}` : ''}`, { key });
        expect(response.status).toBe(200);
        const page = response.body.data.events as FeedEvent[];
        seen.push(...page);
        if (page.length > 0) after = page.at(-1)!.uuid;
        if (!writing && !response.body.data.has_more) return;
        if (page.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const follower = follow();
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 60; i++) {
      const kind = i % 4;
      writes.push(
        kind === 0
          ? makeCustomer(app, key)
          : kind === 1
            ? makePayment(app, key, invoice.uuid, 1)
            : kind === 2
              ? send(key, 'PATCH', `/customers/${setup.customer.uuid}`, { notes: `n${i}` })
              : makeLocation(app, key, { is_primary: true }),
      );
    }
    await Promise.all(writes);
    const total = await storedEventCount(companyId);
    // Wait until the feed shows them all, then let the follower catch up.
    await waitForFeed(app, key, total);
    writing = false;
    await follower;
    const stored = await rowsOf<{ uuid: string }>(ctx.database, sql`select uuid from events where company_id = ${companyId} order by txid, seq`);
    expect(seen.map((event) => event.uuid)).toEqual(stored.map((row) => row.uuid));
    expect(new Set(seen.map((event) => event.uuid)).size).toBe(total);
    // 15 customers, 15 payments (+15 invoice updates), 15 customer updates, 15 locations (+14 losing primary), and the setup's.
    expect(total).toBeGreaterThanOrEqual(60 + 15 + 14);
  });
});

describe('retention', () => {
  it('an after older than EVENT_RETENTION_DAYS is 400; the cleanup deletes old events and their deliveries', async () => {
    const company: TestCompany = await makeCompany(ctx.database);
    const old = await makeCustomer(app, company.key);
    const recent = await makeCustomer(app, company.key);
    const [oldEvent, recentEvent] = await waitForFeed(app, company.key, 2);
    await ctx.database.db.execute(sql`update events set created_at = now() - interval '31 days' where company_id = ${company.companyId} and uuid = ${oldEvent.uuid}`);
    const expired = await call(app, 'GET', `/api/v1/events?after=${oldEvent.uuid}`, { key: company.key });
    expect(expired.status).toBe(400);
    expect(expired.body.error.details[0].field).toBe('after');
    // Before the cleanup deletes it, an expired event is already gone from the feed and from its GET: a client
    // that starts without after never gets an event it could not page after.
    expect((await readFeed(app, company.key)).map((event) => event.uuid)).toEqual([recentEvent.uuid]);
    expect((await call(app, 'GET', `/api/v1/events?limit=1`, { key: company.key })).body.data.events[0].uuid).toBe(recentEvent.uuid);
    expect((await call(app, 'GET', `/api/v1/events/${oldEvent.uuid}`, { key: company.key })).status).toBe(404);
    expect((await call(app, 'GET', `/api/v1/events?object_uuid=${old.uuid}`, { key: company.key })).body.data.events).toEqual([]);

    expect(await deleteExpiredEvents(ctx.database.db, ctx.config.EVENT_RETENTION_DAYS, 1)).toBeGreaterThanOrEqual(1);
    expect((await call(app, 'GET', `/api/v1/events/${oldEvent.uuid}`, { key: company.key })).status).toBe(404);
    const gone = await call(app, 'GET', `/api/v1/events?after=${oldEvent.uuid}`, { key: company.key });
    expect(gone.status).toBe(400);
    expect((await readFeed(app, company.key)).map((event) => event.uuid)).toEqual([recentEvent.uuid]);
    expect(old.uuid).not.toBe(recent.uuid);
  });

  it('the background cleanup deletes expired events and stops cleanly, waiting for a running pass', async () => {
    const company = await makeCompany(ctx.database);
    await makeCustomer(app, company.key);
    await makeCustomer(app, company.key);
    await ctx.database.db.execute(sql`update events set created_at = now() - interval '40 days' where company_id = ${company.companyId}`);
    const errors: unknown[] = [];
    const retention = new EventRetention(ctx.database.db, 30, 60_000, (error) => errors.push(error));
    retention.start();
    const pass = retention.runOnce();
    await retention.stop();
    await pass;
    expect(errors).toEqual([]);
    expect(await storedEventCount(company.companyId)).toBe(0);
    // Stopped: no further pass starts.
    await makeCustomer(app, company.key);
    await ctx.database.db.execute(sql`update events set created_at = now() - interval '40 days' where company_id = ${company.companyId}`);
    await retention.runOnce();
    expect(await storedEventCount(company.companyId)).toBe(1);
  });
});
