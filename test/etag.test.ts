import { describe, expect, it } from 'vitest';
import { etagOf } from '../src/shared/etag.js';
import { businessToday } from '../src/modules/invoices/invoice-status.js';
import { buildTestApp, call } from './helpers/app.js';
import { createVia, makeCompany, makeCustomer, makeLocation } from './helpers/factories.js';
import { photoUploadPayload, seedAll } from './helpers/seed-all.js';

/**
 * ETags and If-None-Match (DECISIONS.md §9.4) through HTTP: every answer that carries one record has a strong
 * ETag of its JSON, stable while the record is unchanged and different as soon as its JSON changes. The item
 * paths come from the route table, so a new item route without an ETag fails here.
 */

const ctx = await buildTestApp({ env: { PUBLIC_BASE_URL: 'https://api.example.test' } });
const company = await makeCompany(ctx.database);
const key = company.key;
const seed = await seedAll(ctx.app, key);

type Paths = Record<string, Record<string, unknown>>;
const documented = (ctx.app.swagger() as { paths: Paths }).paths;
const STRONG_ETAG = /^"[A-Za-z0-9_-]{32}"$/;

/** Every GET that answers one record: the item paths of the route table, and the company of the key. */
const recordGets = Object.entries(documented)
  .filter(([path, methods]) => path.startsWith('/api/v1') && methods.get && (/\}$/.test(path) || path === '/api/v1/companies/me'))
  .map(([path]) => path);

function urlOf(path: string): string {
  if (path === '/api/v1/companies/me') return path;
  const collection = path.replace(/\/\{[^}]+\}$/, '');
  const id = seed.byCollection[collection];
  if (!id) throw new Error(`No fixture for ${path}: add one to seedAll in test/helpers/seed-all.ts`);
  return path.replace('{job_uuid}', seed.jobUuid).replace(/\{[^}]+\}$/, id);
}

async function etagOfGet(url: string): Promise<string> {
  const response = await call(ctx.app, 'GET', url, { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  const etag = response.headers.etag as string;
  expect(etag).toMatch(STRONG_ETAG);
  return etag;
}

describe('ETag on every record GET', () => {
  it('covers every item path of the route table', () => {
    expect(recordGets.length).toBeGreaterThanOrEqual(9);
    expect(recordGets).toContain('/api/v1/jobs/{job_uuid}/photos/{photo_uuid}');
  });

  for (const path of recordGets) {
    it(`GET ${path}: a strong ETag of the JSON in data, the same on every GET`, async () => {
      const url = urlOf(path);
      const first = await call(ctx.app, 'GET', url, { key });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.headers.etag).toMatch(STRONG_ETAG);
      // The value the write paths compare If-Match with.
      expect(first.headers.etag).toBe(etagOf(first.body.data));
      const second = await call(ctx.app, 'GET', url, { key });
      expect(second.headers.etag).toBe(first.headers.etag);
      expect(second.body).toEqual(first.body);
    });

    it(`GET ${path}: 304 without a body for a matching If-None-Match, 200 otherwise`, async () => {
      const url = urlOf(path);
      const etag = await etagOfGet(url);
      for (const ifNoneMatch of [etag, '*', `"nope", ${etag}`, `W/${etag}`, `"a","b" , W/${etag}`]) {
        const response = await call(ctx.app, 'GET', url, { key, headers: { 'if-none-match': ifNoneMatch, 'x-request-id': 'cond-1' } });
        expect(response.status, ifNoneMatch).toBe(304);
        expect(response.raw.body).toBe('');
        expect(response.headers.etag).toBe(etag);
        expect(response.headers['x-request-id']).toBe('cond-1');
        expect(response.headers['x-usage-count']).toMatch(/^\d+$/);
        expect(response.headers['x-usage-resets']).toBeDefined();
        expect(response.headers['content-type']).toBeUndefined();
        expect(response.headers['content-length']).toBeUndefined();
      }
      for (const ifNoneMatch of ['"nope"', `"${etag}"`, `W/"other", "x"`, etag.slice(1, -1)]) {
        const response = await call(ctx.app, 'GET', url, { key, headers: { 'if-none-match': ifNoneMatch } });
        expect(response.status, ifNoneMatch).toBe(200);
        expect(response.headers.etag).toBe(etag);
        expect(response.body.success).toBe(true);
      }
    });
  }

  it('answers HEAD like GET: the same ETag, and 304 for a matching If-None-Match', async () => {
    const url = `/api/v1/jobs/${seed.jobUuid}`;
    const etag = await etagOfGet(url);
    const head = await ctx.app.inject({ method: 'HEAD', url, headers: { authorization: `Bearer ${key}` } });
    expect(head.statusCode).toBe(200);
    expect(head.headers.etag).toBe(etag);
    const notModified = await ctx.app.inject({ method: 'HEAD', url, headers: { authorization: `Bearer ${key}`, 'if-none-match': etag } });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.headers.etag).toBe(etag);
    expect(notModified.body).toBe('');
  });

  it('counts a 304 as usage like any request', async () => {
    const url = `/api/v1/customers/${seed.customerUuid}`;
    const etag = await etagOfGet(url);
    const before = Number((await call(ctx.app, 'GET', url, { key })).headers['x-usage-count']);
    const notModified = await call(ctx.app, 'GET', url, { key, headers: { 'if-none-match': etag } });
    expect(notModified.status).toBe(304);
    expect(Number(notModified.headers['x-usage-count'])).toBe(before + 1);
  });

  it('gives the soft-deleted record its own ETag with include_deleted=true', async () => {
    const customer = await makeCustomer(ctx.app, key);
    const live = await etagOfGet(`/api/v1/customers/${customer.uuid}`);
    expect((await call(ctx.app, 'DELETE', `/api/v1/customers/${customer.uuid}`, { key })).status).toBe(200);
    const deleted = await etagOfGet(`/api/v1/customers/${customer.uuid}?include_deleted=true`);
    expect(deleted).not.toBe(live);
    const gone = await call(ctx.app, 'GET', `/api/v1/customers/${customer.uuid}`, { key, headers: { 'if-none-match': '*' } });
    expect(gone.status).toBe(404);
    expect(gone.headers.etag).toBeUndefined();
  });
});

/** A create body and an update body per resource (a fresh record each time, from the seeded references). */
const WRITES: Array<{ collection: string; create: () => Record<string, unknown>; update: Record<string, unknown>; methods?: Array<'PATCH' | 'PUT'> }> = [
  // Its create answer also shows the secret; keys are changed with PATCH only.
  { collection: '/api_keys', create: () => ({ name: 'Reader', scopes: ['jobs:read'] }), update: { name: 'Jobs reader' }, methods: ['PATCH'] },
  { collection: '/locations', create: () => ({ name: 'Depot', address1: '1 Main St', city: 'Austin', state: 'TX', zip: '78701' }), update: { name: 'North depot' } },
  { collection: '/customers', create: () => ({ first_name: 'Ada', last_name: 'Byron' }), update: { company_name: 'Byron & Co' } },
  // Disabled, so it sends nothing; its create answer also shows the secret, which a GET never does.
  { collection: '/webhook_endpoints', create: () => ({ url: 'https://93.184.215.14/hooks', events: ['*'], enabled: false }), update: { description: 'Ledger' } },
  { collection: '/jobs', create: () => ({ customer_uuid: seed.customerUuid, title: 'Inspect roof' }), update: { title: 'Inspect the roof' } },
  { collection: '/templates', create: () => ({ name: 'Visit', pricing_type: 'flat', base_price: 80 }), update: { base_price: 85.5 } },
  { collection: '/estimates', create: () => ({ customer_uuid: seed.customerUuid, template_uuid: seed.templateUuid }), update: { response_notes: 'Approved by phone' } },
  {
    collection: '/invoices',
    create: () => ({ job_uuid: seed.jobUuid, customer_uuid: seed.customerUuid, due_date: '2031-01-31', line_items: [{ description: 'Labor', unit_price: 300 }] }),
    update: { notes: 'Thanks!' },
  },
  {
    collection: '/payments',
    create: () => ({ invoice_uuid: seed.invoiceUuid, payment_type: 'check', amount: 1.25, payment_date: '2026-11-21' }),
    update: { reference_number: 'CHK-1001' },
  },
  { collection: '/visits', create: () => ({ job_uuid: seed.jobUuid, starts_at: '2031-02-01T14:00:00Z', ends_at: '2031-02-01T15:00:00Z' }), update: { title: 'Second visit' } },
  { collection: '/time_off', create: () => ({ user_id: seed.userId, starts_at: '2031-03-01T00:00:00Z', ends_at: '2031-03-02T00:00:00Z' }), update: { reason: 'Training' } },
];

describe('ETag on create and update answers', () => {
  it('covers every collection that creates records', () => {
    const creates = Object.entries(documented)
      .filter(([path, methods]) => path.startsWith('/api/v1') && methods.post && !/\}|preview/.test(path))
      .map(([path]) => path.replace('/api/v1', ''));
    expect(creates.sort()).toEqual(WRITES.map((write) => write.collection).sort());
  });

  for (const write of WRITES) {
    it(`${write.collection}: create and update carry the ETag a GET right after gives; an update changes it`, async () => {
      const created = await call(ctx.app, 'POST', `/api/v1${write.collection}`, { key, body: write.create() });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      expect(created.headers.etag).toMatch(STRONG_ETAG);
      const { secret: _shownOnce, api_key: _secretShownOnce, ...record } = created.body.data;
      expect(created.headers.etag).toBe(etagOf(record));
      const url = `/api/v1${write.collection}/${created.body.data.uuid}`;
      expect(await etagOfGet(url)).toBe(created.headers.etag);

      const methods = write.methods ?? ['PATCH', 'PUT'];
      for (const method of methods) {
        const before = await etagOfGet(url);
        // The last update changes the record; the ones before it send nothing.
        const body = method === methods.at(-1) ? write.update : {};
        const updated = await call(ctx.app, method, url, { key, body });
        expect(updated.status, JSON.stringify(updated.body)).toBe(200);
        expect(updated.headers.etag).toMatch(STRONG_ETAG);
        expect(updated.headers.etag).toBe(etagOf(updated.body.data));
        expect(await etagOfGet(url)).toBe(updated.headers.etag);
        if (method === methods.at(-1)) expect(updated.headers.etag).not.toBe(before);
      }
    });
  }

  it('a replayed idempotent create carries the same ETag', async () => {
    const headers = { 'idempotency-key': `etag-replay-${Date.now()}` };
    const first = await call(ctx.app, 'POST', '/api/v1/customers', { key, headers, body: { first_name: 'Re', last_name: 'Play' } });
    const replay = await call(ctx.app, 'POST', '/api/v1/customers', { key, headers, body: { first_name: 'Re', last_name: 'Play' } });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(first.headers.etag).toMatch(STRONG_ETAG);
    expect(replay.headers.etag).toBe(first.headers.etag);
  });

  it('no ETag on lists, deletes, previews, uploads, the answer of a settings change and errors', async () => {
    const customer = await makeCustomer(ctx.app, key);
    const answers = [
      await call(ctx.app, 'GET', '/api/v1/customers', { key }),
      await call(ctx.app, 'GET', `/api/v1/jobs/${seed.jobUuid}/photos`, { key }),
      await call(ctx.app, 'GET', '/api/v1/users', { key }),
      await call(ctx.app, 'PUT', '/api/v1/numbering', { key, body: {} }),
      await call(ctx.app, 'POST', '/api/v1/invoices/preview', { key, body: { subtotal: 10 } }),
      await call(ctx.app, 'POST', '/api/v1/estimates/preview', { key, body: { template_uuid: seed.templateUuid } }),
      await call(ctx.app, 'DELETE', `/api/v1/customers/${customer.uuid}`, { key }),
      await call(ctx.app, 'GET', `/api/v1/customers/${customer.uuid}`, { key }),
      await call(ctx.app, 'POST', '/api/v1/customers', { key, body: { first_name: 'No last name' } }),
      await call(ctx.app, 'PATCH', `/api/v1/jobs/${seed.jobUuid}`, { key, body: { title: '' } }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 404, 400, 400]);
    for (const answer of answers) expect(answer.headers.etag).toBeUndefined();
    const { payload, contentType } = photoUploadPayload();
    const upload = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/jobs/${seed.jobUuid}/photos`,
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
      payload,
    });
    expect(upload.statusCode, upload.body).toBe(200);
    expect(upload.headers.etag).toBeUndefined();
  });
});

describe('the ETag changes exactly when the record JSON changes', () => {
  it('changes with a direct write and comes back with the same JSON', async () => {
    const customer = await makeCustomer(ctx.app, key, { first_name: 'Kim' });
    const url = `/api/v1/customers/${customer.uuid}`;
    const original = await etagOfGet(url);
    await call(ctx.app, 'PATCH', url, { key, body: { first_name: 'Kimberly' } });
    const renamed = await etagOfGet(url);
    expect(renamed).not.toBe(original);
    // Same JSON apart from updated_at: still a different ETag, since updated_at moved.
    await call(ctx.app, 'PATCH', url, { key, body: { first_name: 'Kim' } });
    expect(await etagOfGet(url)).not.toBe(renamed);
  });

  it('changes when a payment settles an invoice (a side effect)', async () => {
    const invoice = await createVia(ctx.app, key, '/invoices', {
      job_uuid: seed.jobUuid,
      customer_uuid: seed.customerUuid,
      due_date: '2031-01-31',
      line_items: [{ description: 'Part', unit_price: 40 }],
    });
    const url = `/api/v1/invoices/${invoice.uuid}`;
    const unpaid = await etagOfGet(url);
    expect(await etagOfGet(url)).toBe(unpaid);
    await createVia(ctx.app, key, '/payments', { invoice_uuid: invoice.uuid, payment_type: 'cash', amount: 40, payment_date: '2026-11-21' });
    const paid = await call(ctx.app, 'GET', url, { key });
    expect(paid.body.data.status).toBe('Paid');
    expect(paid.body.data.balance_amount).toBe(0);
    expect(paid.headers.etag).not.toBe(unpaid);
    expect(paid.headers.etag).toBe(etagOf(paid.body.data));
  });

  it('changes when an invoice reads Overdue, though its row is untouched (a derived status)', async () => {
    // "Today" is the date in the invoice location's timezone: moving the location from UTC-11 to UTC+14 makes
    // a due date of today-in-Pago-Pago lie in the past, without writing the invoice.
    const location = await makeLocation(ctx.app, key, { timezone: 'Pacific/Pago_Pago' });
    const dueDate = businessToday('Pacific/Pago_Pago');
    const invoice = await createVia(ctx.app, key, '/invoices', {
      job_uuid: seed.jobUuid,
      customer_uuid: seed.customerUuid,
      location_uuid: location.uuid,
      issue_date: dueDate,
      due_date: dueDate,
      line_items: [{ description: 'Part', unit_price: 55 }],
    });
    const url = `/api/v1/invoices/${invoice.uuid}`;
    const pending = await call(ctx.app, 'GET', url, { key });
    expect(pending.body.data.status).toBe('Pending');
    await call(ctx.app, 'PATCH', `/api/v1/locations/${location.uuid}`, { key, body: { timezone: 'Pacific/Kiritimati' } });
    const overdue = await call(ctx.app, 'GET', url, { key });
    expect(overdue.body.data.status).toBe('Overdue');
    expect(overdue.body.data.updated_at).toBe(pending.body.data.updated_at);
    expect({ ...overdue.body.data, status: 'Pending' }).toEqual(pending.body.data);
    expect(overdue.headers.etag).not.toBe(pending.headers.etag);
    expect(overdue.headers.etag).toBe(etagOf(overdue.body.data));
    // A client holding the Pending ETag gets the new state, not a 304.
    expect((await call(ctx.app, 'GET', url, { key, headers: { 'if-none-match': pending.headers.etag as string } })).status).toBe(200);
  });

  it('changes when an embedded object changes (the customer of a job)', async () => {
    const customer = await makeCustomer(ctx.app, key, { first_name: 'Lee' });
    const job = await createVia(ctx.app, key, '/jobs', { customer_uuid: customer.uuid, title: 'Gutter' });
    const url = `/api/v1/jobs/${job.uuid}`;
    const before = await call(ctx.app, 'GET', url, { key });
    await call(ctx.app, 'PATCH', `/api/v1/customers/${customer.uuid}`, { key, body: { first_name: 'Leigh' } });
    const after = await call(ctx.app, 'GET', url, { key });
    expect(after.body.data.customer.first_name).toBe('Leigh');
    expect(after.body.data.updated_at).toBe(before.body.data.updated_at);
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it('keeps a photo ETag and its signed link stable across GETs', async () => {
    const url = `/api/v1/jobs/${seed.jobUuid}/photos/${seed.photoUuid}`;
    const ttl = ctx.config.PHOTO_URL_TTL_SECONDS;
    const startedAt = Date.now() / 1000;
    const first = await call(ctx.app, 'GET', url, { key });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = await call(ctx.app, 'GET', url, { key });
    const endedAt = Date.now() / 1000;
    expect(first.body.data.photo_url).toMatch(/^https:\/\/api\.example\.test\/files\/.+\?expires=\d+&signature=[0-9a-f]{64}$/);
    const expires = Number(new URL(first.body.data.photo_url).searchParams.get('expires'));
    // Valid at most the TTL, and at least the TTL less one window (a tenth of it, at most a minute).
    const window = Math.min(60, Math.floor(ttl / 10));
    expect(expires - endedAt).toBeGreaterThan(ttl - window - 2);
    expect(expires - startedAt).toBeLessThanOrEqual(ttl + 1);
    // Both reads fall in one link window unless a window boundary passed between them.
    if (Math.floor(startedAt / window) === Math.floor(endedAt / window)) {
      expect(second.body.data.photo_url).toBe(first.body.data.photo_url);
      expect(second.headers.etag).toBe(first.headers.etag);
    } else {
      expect(Number(new URL(second.body.data.photo_url).searchParams.get('expires'))).toBe(expires + window);
    }
  });

  it('never answers another company with a 304 or an ETag', async () => {
    const other = await makeCompany(ctx.database);
    const etag = await etagOfGet(`/api/v1/customers/${seed.customerUuid}`);
    const foreign = await call(ctx.app, 'GET', `/api/v1/customers/${seed.customerUuid}`, { key: other.key, headers: { 'if-none-match': etag } });
    expect(foreign.status).toBe(404);
    expect(foreign.headers.etag).toBeUndefined();
  });
});
