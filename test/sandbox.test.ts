import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { setCompany } from '../src/modules/admin/provisioning.service.js';
import { buildTestApp, call } from './helpers/app.js';
import { expectError } from './helpers/conventions.js';
import { startMailSink } from './helpers/documents.js';
import { createVia, makeCompany, makeCustomer, makeUser } from './helpers/factories.js';
import { seedAll, uploadPhoto } from './helpers/seed-all.js';
import { startReceiver, waitFor } from './helpers/webhooks.js';

/**
 * The sandbox (DECISIONS §12): a test key works on a data space of the company's own, where no live record,
 * event, delivery or number is seen and from where nothing leaks into live answers, webhooks, usage or email.
 */

const sink = await startMailSink();
const ctx = await buildTestApp({
  env: {
    SMTP_URL: sink.url,
    // Settings changes (add-ons, limits) are seen by the next request.
    AUTH_CACHE_TTL_MS: '0',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
  },
});
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers) await close();
  await sink.close();
});

/** A live company and a test key (scope *) made over HTTP by its live key. */
async function companyWithTestKey(options: Parameters<typeof makeCompany>[1] = {}) {
  const live = await makeCompany(ctx.database, options);
  const test = await createVia(ctx.app, live.key, '/api_keys', { mode: 'test', scopes: ['*'] });
  return { ...live, testKey: test.api_key as string };
}

const ids = (rows: Array<{ uuid?: string; id?: string }>) => rows.map((row) => (row.uuid ?? row.id) as string);

/** The ids a key lists under a collection path, deleted ones included. */
async function listed(key: string, path: string): Promise<string[]> {
  const response = await call(ctx.app, 'GET', `${path}?include_deleted=true&limit=100`, { key });
  expect(response.status, `${path} ${JSON.stringify(response.body)}`).toBe(200);
  const [plural] = Object.keys(response.body.data).filter((name) => name !== 'pagination');
  return ids(response.body.data[plural]);
}

async function feed(key: string): Promise<Array<{ uuid: string; object_uuid: string }>> {
  const response = await call(ctx.app, 'GET', '/api/v1/events?limit=100', { key });
  expect(response.status).toBe(200);
  return response.body.data.events;
}

describe('the sandbox of a company', () => {
  it('is made on first use with the live company’s record, numbering settings, add-ons and users', async () => {
    const company = await companyWithTestKey({ addons: ['numbering'], name: 'Sandboxed Plumbing' });
    const prefix = await call(ctx.app, 'PUT', '/api/v1/numbering', { key: company.key, body: { invoice: { prefix: 'LV-', padding: 3 } } });
    expect(prefix.status).toBe(200);
    const tech = await makeUser(ctx.database, company.companyId, 'Tess', 'Tech');

    const live = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key });
    const sandbox = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.testKey });
    expect(sandbox.status).toBe(200);
    // The sandbox is the company's: a test key answers the company's own record, uuid included.
    expect(sandbox.body.data).toEqual(live.body.data);
    expect(sandbox.body.data.uuid).toBe(company.companyId);

    const numbering = await call(ctx.app, 'GET', '/api/v1/numbering', { key: company.testKey });
    expect(numbering.body.data.invoice).toMatchObject({ prefix: 'LV-', padding: 3, next_number: 1, next_number_formatted: 'LV-001' });
    const users = await call(ctx.app, 'GET', '/api/v1/users', { key: company.testKey });
    expect(ids(users.body.data.users).sort()).toEqual([company.userId, tech].sort());

    // Records made with the test key name its user; the sandbox's copies of the users can be assigned.
    const customer = await makeCustomer(ctx.app, company.testKey);
    const job = await createVia(ctx.app, company.testKey, '/jobs', { customer_uuid: customer.uuid, title: 'Test job', assigned_to_user_id: tech });
    expect(job.assigned_user).toMatchObject({ id: tech, first_name: 'Tess' });
    const template = await createVia(ctx.app, company.testKey, '/templates', { name: 'Visit', pricing_type: 'flat', base_price: 90 });
    const estimate = await createVia(ctx.app, company.testKey, '/estimates', { customer_uuid: customer.uuid, template_uuid: template.uuid });
    expect(estimate.created_by_user_id).toBe(company.userId);

    // A user added later is in the sandbox too.
    const later = await makeUser(ctx.database, company.companyId, 'Lee', 'Later');
    expect(ids((await call(ctx.app, 'GET', '/api/v1/users', { key: company.testKey })).body.data.users)).toContain(later);

    // It follows the live company's add-ons.
    const job2 = await createVia(ctx.app, company.testKey, '/jobs', { customer_uuid: customer.uuid, title: 'Photos' });
    expectError(await call(ctx.app, 'GET', `/api/v1/jobs/${job2.uuid}/photos`, { key: company.testKey }), 403, 'addon_required');
    await setCompany(ctx.database.db, { companyId: company.companyId, addons: ['numbering', 'photos'] });
    expect((await call(ctx.app, 'GET', `/api/v1/jobs/${job2.uuid}/photos`, { key: company.testKey })).status).toBe(200);
  });

  it('a test key never sees a live record, event, delivery or number, and a live key never sees a sandbox one', async () => {
    const company = await companyWithTestKey();
    const live = await seedAll(ctx.app, company.key);
    // The live company has numbered documents before the sandbox makes any.
    await createVia(ctx.app, company.key, '/invoices', { job_uuid: live.jobUuid, customer_uuid: live.customerUuid, due_date: '2030-01-31' });
    const sandbox = await seedAll(ctx.app, company.testKey);

    for (const [collection, liveId] of Object.entries(live.byCollection)) {
      // Keys are no sandbox data: both modes' keys belong to the company (see api-keys.test.ts).
      if (collection === '/api/v1/api_keys') continue;
      const sandboxId = sandbox.byCollection[collection];
      const path = collection.replace('{job_uuid}', live.jobUuid);
      const sandboxPath = collection.replace('{job_uuid}', sandbox.jobUuid);
      if (collection.endsWith('/events')) {
        expect(ids(await feed(company.testKey))).not.toContain(liveId);
        expect(ids(await feed(company.key))).not.toContain(sandboxId);
      } else {
        expect(await listed(company.testKey, sandboxPath)).not.toContain(liveId);
        expect(await listed(company.key, path)).not.toContain(sandboxId);
        expect(await listed(company.testKey, sandboxPath)).toContain(sandboxId);
      }
      expectError(await call(ctx.app, 'GET', `${sandboxPath}/${liveId}`, { key: company.testKey }), 404, 'not_found');
      expectError(await call(ctx.app, 'GET', `${path}/${sandboxId}`, { key: company.key }), 404, 'not_found');
    }
    // Nothing of one side in the other's feed, and the other's events are unknown cursors.
    const liveObjects = new Set(Object.values(live.byCollection));
    expect((await feed(company.testKey)).filter((event) => liveObjects.has(event.object_uuid))).toEqual([]);
    const sandboxObjects = new Set(Object.values(sandbox.byCollection));
    expect((await feed(company.key)).filter((event) => sandboxObjects.has(event.object_uuid))).toEqual([]);
    const liveEvent = (await feed(company.key))[0].uuid;
    expectError(await call(ctx.app, 'GET', `/api/v1/events?after=${liveEvent}`, { key: company.testKey }), 400, 'validation_error', 'after');
    // Another side's endpoint and its deliveries do not exist.
    const liveEndpoint = live.byCollection['/api/v1/webhook_endpoints'];
    expectError(await call(ctx.app, 'GET', `/api/v1/webhook_endpoints/${liveEndpoint}/deliveries`, { key: company.testKey }), 404, 'not_found');

    // Numbers: the sandbox counts from 1 on its own; live numbering is unmoved by it.
    expect(sandbox.records.invoice.invoice_number).toBe('INV-0001');
    expect(sandbox.records.payment.payment_number).toBe('PAY-0001');
    const liveNumbering = await call(ctx.app, 'GET', '/api/v1/numbering', { key: company.key });
    expect(liveNumbering.body.data.invoice.next_number).toBe(3);
    const sandboxNumbering = await call(ctx.app, 'GET', '/api/v1/numbering', { key: company.testKey });
    expect(sandboxNumbering.body.data.invoice.next_number).toBe(2);
    const liveInvoices = (await call(ctx.app, 'GET', '/api/v1/invoices', { key: company.key })).body.data.invoices;
    expect(liveInvoices.map((invoice: { invoice_number: string }) => invoice.invoice_number).sort()).toEqual(['INV-0001', 'INV-0002']);
  });

  it('sends the sandbox’s webhooks only to the sandbox’s endpoints', async () => {
    const company = await companyWithTestKey();
    const liveReceiver = await startReceiver();
    const sandboxReceiver = await startReceiver();
    closers.push(liveReceiver.close, sandboxReceiver.close);
    await createVia(ctx.app, company.key, '/webhook_endpoints', { url: `${liveReceiver.url}/live`, events: ['*'] });
    await createVia(ctx.app, company.testKey, '/webhook_endpoints', { url: `${sandboxReceiver.url}/sandbox`, events: ['*'] });

    const testCustomer = await makeCustomer(ctx.app, company.testKey);
    const liveCustomer = await makeCustomer(ctx.app, company.key);
    await waitFor(() => sandboxReceiver.received.length >= 1 && liveReceiver.received.length >= 1, 10_000, 'both deliveries');
    // Time for a stray delivery to arrive, if there were one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const objects = (receiver: typeof liveReceiver) => receiver.received.map((request) => JSON.parse(request.body).data.object.uuid);
    expect(objects(sandboxReceiver)).toEqual([testCustomer.uuid]);
    expect(objects(liveReceiver)).toEqual([liveCustomer.uuid]);
  });

  it('does not count against the live monthly limit: its requests have their own usage headers', async () => {
    const company = await companyWithTestKey({ monthlyRequestLimit: 4 });
    // The key-making request counted 1.
    const before = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key });
    expect(before.headers['x-usage-count']).toBe('2');
    expect(before.headers['x-usage-limit']).toBe('4');
    for (let n = 1; n <= 6; n++) {
      const response = await call(ctx.app, 'GET', '/api/v1/customers', { key: company.testKey });
      expect(response.status).toBe(200);
      expect(response.headers['x-usage-count']).toBe(String(n));
      expect(response.headers).not.toHaveProperty('x-usage-limit');
      expect(response.headers['x-usage-resets']).toBe(before.headers['x-usage-resets']);
    }
    await ctx.app.deps.usage.flush();
    const after = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key });
    expect(after.headers['x-usage-count']).toBe('3');
    expect((await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key })).headers['x-usage-count']).toBe('4');
    expectError(await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key }), 403, 'usage_limit_exceeded');
    // The live limit used up, the sandbox goes on.
    expect((await call(ctx.app, 'GET', '/api/v1/customers', { key: company.testKey })).status).toBe(200);
  });

  it('answers an email as sent with test_mode: true and sends nothing, with or without a mail server', async () => {
    const company = await companyWithTestKey();
    const live = await seedAll(ctx.app, company.key);
    const seeded = await seedAll(ctx.app, company.testKey);
    const draft = await createVia(ctx.app, company.testKey, '/invoices', {
      job_uuid: seeded.jobUuid,
      customer_uuid: seeded.customerUuid,
      due_date: '2030-01-31',
      status: 'Draft',
      line_items: [{ description: 'Visit', unit_price: 50 }],
    });
    const received = sink.messages.length;

    const sent = await call(ctx.app, 'POST', `/api/v1/invoices/${draft.uuid}/send`, { key: company.testKey, body: { to: 'dana@example.com' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body.data).toMatchObject({ to: 'dana@example.com', cc: [], test_mode: true });
    expect(sent.body.data.message_id).toMatch(/^<.+@.+>$/);
    // The sandbox moved on as after a real send.
    expect((await call(ctx.app, 'GET', `/api/v1/invoices/${draft.uuid}`, { key: company.testKey })).body.data.status).toBe('Pending');
    const estimate = await call(ctx.app, 'POST', `/api/v1/estimates/${seeded.estimateUuid}/send`, { key: company.testKey, body: { to: 'dana@example.com' } });
    expect(estimate.body.data.test_mode).toBe(true);

    // A server without a mail server answers the sandbox too.
    const noMail = await buildApp({ config: { ...ctx.config, SMTP_URL: undefined }, database: ctx.database, ownsDatabase: false });
    await noMail.ready();
    closers.push(() => noMail.close());
    const offline = await call(noMail, 'POST', `/api/v1/invoices/${draft.uuid}/send`, { key: company.testKey, body: { to: 'dana@example.com' } });
    expect(offline.status).toBe(200);
    expect(offline.body.data.test_mode).toBe(true);
    expectError(await call(noMail, 'POST', `/api/v1/invoices/${live.invoiceUuid}/send`, { key: company.key, body: { to: 'dana@example.com' } }), 503, 'service_unavailable');

    expect(sink.messages.length).toBe(received);
    // A live send still reaches the mail server.
    const liveSend = await call(ctx.app, 'POST', `/api/v1/invoices/${live.invoiceUuid}/send`, { key: company.key, body: { to: 'dana@example.com' } });
    expect(liveSend.status).toBe(200);
    expect(liveSend.body.data.test_mode).toBe(false);
    expect(sink.messages.length).toBe(received + 1);
  });
});

describe('DELETE /api/v1/sandbox', () => {
  it('empties the sandbox and nothing else: records, events, endpoints and numbers go; users, keys and settings stay', async () => {
    const company = await companyWithTestKey();
    const live = await seedAll(ctx.app, company.key);
    await call(ctx.app, 'PUT', '/api/v1/numbering', { key: company.testKey, body: { invoice: { prefix: 'TST-' } } });
    const sandbox = await seedAll(ctx.app, company.testKey);
    await uploadPhoto(ctx.app, company.testKey, sandbox.jobUuid);
    const photoUrl = sandbox.records.photo.photo_url as string;
    expect((await ctx.app.inject({ method: 'GET', url: new URL(photoUrl).pathname + new URL(photoUrl).search })).statusCode).toBe(200);

    const emptied = await call(ctx.app, 'DELETE', '/api/v1/sandbox', { key: company.testKey });
    expect(emptied.status, JSON.stringify(emptied.body)).toBe(200);
    expect(emptied.body.data).toEqual({ message: 'Sandbox emptied successfully' });

    for (const collection of Object.keys(sandbox.byCollection)) {
      if (collection === '/api/v1/api_keys' || collection.endsWith('/events') || collection.includes('{job_uuid}')) continue;
      expect(await listed(company.testKey, collection), collection).toEqual([]);
      const response = await call(ctx.app, 'GET', `${collection}?include_deleted=true`, { key: company.testKey });
      expect(response.body.data.pagination.total, collection).toBe(0);
    }
    expect(await feed(company.testKey)).toEqual([]);
    expectError(await call(ctx.app, 'GET', `/api/v1/jobs/${sandbox.jobUuid}/photos`, { key: company.testKey }), 404, 'not_found');
    // The photo's file is gone with it.
    expect((await ctx.app.inject({ method: 'GET', url: new URL(photoUrl).pathname + new URL(photoUrl).search })).statusCode).toBe(404);
    // Users, keys and settings stay; numbers start again.
    expect(ids((await call(ctx.app, 'GET', '/api/v1/users', { key: company.testKey })).body.data.users)).toEqual([company.userId]);
    expect((await call(ctx.app, 'GET', '/api/v1/api_keys', { key: company.testKey })).body.data.pagination.total).toBe(2);
    const numbering = await call(ctx.app, 'GET', '/api/v1/numbering', { key: company.testKey });
    expect(numbering.body.data.invoice).toMatchObject({ prefix: 'TST-', next_number: 1 });
    const again = await seedAll(ctx.app, company.testKey);
    expect(again.records.invoice.invoice_number).toBe('TST-0001');

    // The live company kept everything.
    for (const [collection, id] of Object.entries(live.byCollection)) {
      if (collection.endsWith('/events')) continue;
      expect(await listed(company.key, collection.replace('{job_uuid}', live.jobUuid)), collection).toContain(id);
    }
    expect(ids(await feed(company.key))).toContain(live.byCollection['/api/v1/events']);
  });

  it('needs a test key with * or api_keys:write; a live key is 400 and empties nothing', async () => {
    const company = await companyWithTestKey();
    const customer = await makeCustomer(ctx.app, company.testKey);
    const liveCustomer = await makeCustomer(ctx.app, company.key);
    const testKeyWith = async (scopes: string[]) =>
      (await createVia(ctx.app, company.key, '/api_keys', { mode: 'test', scopes })).api_key as string;

    for (const scopes of [['customers:write'], ['api_keys:read']]) {
      const refused = await call(ctx.app, 'DELETE', '/api/v1/sandbox', { key: await testKeyWith(scopes) });
      expectError(refused, 403, 'insufficient_scope');
      expect(refused.body.error.message).toContain('api_keys:write');
    }
    const liveRefused = await call(ctx.app, 'DELETE', '/api/v1/sandbox', { key: company.key });
    expectError(liveRefused, 400, 'validation_error');
    expect(liveRefused.body.error.message).toMatch(/test key/);
    expect(await listed(company.testKey, '/api/v1/customers')).toEqual([customer.uuid]);
    expect(await listed(company.key, '/api/v1/customers')).toEqual([liveCustomer.uuid]);

    expect((await call(ctx.app, 'DELETE', '/api/v1/sandbox', { key: await testKeyWith(['api_keys:write']) })).status).toBe(200);
    expect(await listed(company.testKey, '/api/v1/customers')).toEqual([]);
    expect(await listed(company.key, '/api/v1/customers')).toEqual([liveCustomer.uuid]);
  });
});
