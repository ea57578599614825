/**
 * Exactly once when the connection dies at COMMIT: the app's database connections go through a proxy that
 * cuts one connection at the statement that makes a keyed write durable (its COMMIT, or a one-statement
 * write outside a transaction), either before the statement reaches PostgreSQL (nothing committed) or after
 * PostgreSQL ran it (committed, but the answer never arrives). The first request then fails without knowing
 * its outcome; its retry with the same Idempotency-Key must run the work once or replay it: never a second
 * record, never a key left in progress, never a lost one. For the create, the payment and the invoice
 * paths (the last two number documents at commit), a webhook delivery's retry and a photo upload (whose
 * staged files must stay exactly when its records committed).
 */
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { createDatabase, type Database } from '../src/db/client.js';
import { customers, idempotencyKeys, invoices, jobPhotos, payments, webhookDeliveries } from '../src/db/schema/index.js';
import { insertEndpoint } from '../src/modules/webhooks/webhooks.repository.js';
import { createTestDatabase, call, testConfig } from './helpers/app.js';
import { committingStatement, startCuttingProxy, type CutMoment, type CuttingProxy } from './helpers/cutting-proxy.js';
import { insertJob, invoiceBody, makeInvoiceOf } from './helpers/billing-factories.js';
import { makeCompany, makeCustomer, validCustomer, type TestCompany } from './helpers/factories.js';
import { makeJob, multipartBody, PNG_BYTES } from './helpers/jobs-factories.js';
import { recordEvent } from './helpers/webhooks.js';

const serverUrl = inject('databaseServerUrl');
const uploadRoot = mkdtempSync(path.join(tmpdir(), 'commit-cut-'));

/** The stored files of a company, as storage keys. */
function filesOf(companyId: string, dir = path.join(uploadRoot, companyId)): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesOf(companyId, path.join(dir, entry.name)) : [path.relative(uploadRoot, path.join(dir, entry.name))],
  );
}

describe.skipIf(!serverUrl)('a keyed write whose connection is cut at COMMIT', () => {
  let direct: Awaited<ReturnType<typeof createTestDatabase>>;
  let proxy: CuttingProxy;
  let database: Database;
  let app: FastifyInstance;

  beforeAll(async () => {
    direct = await createTestDatabase();
    const url = new URL(direct.url!);
    proxy = await startCuttingProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const config = testConfig({ UPLOAD_DIR: uploadRoot, WEBHOOK_WORKER_ENABLED: 'false', DATABASE_URL: proxied.toString() });
    database = await createDatabase({ ...config, DATABASE_POOL_SIZE: 4 });
    app = await buildApp({ config, database, ownsDatabase: true });
    await app.ready();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await proxy?.close();
    await direct?.database.close();
    await direct?.drop();
  });

  /** Keys of the company still in progress: none may be left. */
  async function keysInProgress(companyId: string) {
    const rows = await direct.database.db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.companyId, companyId), eq(idempotencyKeys.state, 'in_progress')));
    return rows.map((row) => row.key);
  }

  type Answer = { status: number; body: any; headers: Record<string, unknown> };
  const post = (company: TestCompany, path: string, body: unknown, key: string) => () =>
    call(app, 'POST', `/api/v1${path}`, { key: company.key, body, headers: { 'idempotency-key': key } });

  /**
   * Sends the request with the connection cut at its commit, then retries it with the same key until it is
   * answered 200 (at most a few times). Answers the first and the final response.
   */
  async function cutThenRetry(company: TestCompany, send: () => Promise<Answer>, moment: CutMoment) {
    const cut = proxy.cutNext(committingStatement, moment);
    const first = await send();
    expect(await Promise.race([cut.then(() => 'cut'), new Promise((resolve) => setTimeout(() => resolve('not cut'), 50))])).toBe('cut');
    expect(first.status).toBeGreaterThanOrEqual(500);
    expect(first.body.success).toBe(false);
    let retry = await send();
    for (let attempt = 0; retry.status !== 200 && attempt < 5; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      retry = await send();
    }
    expect(retry.status).toBe(200);
    // One more retry: the same answer again, replayed.
    const again = await send();
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(retry.body);
    expect(await keysInProgress(company.companyId)).toEqual([]);
    return { first, retry };
  }

  for (const moment of ['before', 'after'] as const) {
    const outcome = moment === 'before' ? 'not committed: the retry runs it once' : 'committed unseen: the retry replays it';
    it(`customer create, cut ${moment} the commit (${outcome})`, async () => {
      const company = await makeCompany(direct.database);
      const body = validCustomer({ notes: `cut-${moment}` });
      const { retry } = await cutThenRetry(company, post(company, '/customers', body, `customer-${moment}`), moment);
      expect(retry.headers['idempotent-replayed']).toBe(moment === 'after' ? 'true' : undefined);
      const rows = await direct.database.db.select({ uuid: customers.uuid }).from(customers).where(eq(customers.companyId, company.companyId));
      expect(rows.map((row) => row.uuid)).toEqual([retry.body.data.uuid]);
      const got = await call(app, 'GET', `/api/v1/customers/${retry.body.data.uuid}`, { key: company.key });
      expect(got.body.data).toEqual(retry.body.data);
    });

    it(`invoice create, cut ${moment} the commit (${outcome}); numbers stay consecutive`, async () => {
      const company = await makeCompany(direct.database);
      const customer = await makeCustomer(app, company.key);
      const jobs = [await insertJob(direct.database, company.companyId, customer.uuid), await insertJob(direct.database, company.companyId, customer.uuid)];
      const setup = { company, customer, jobUuid: jobs[0] };
      const body = invoiceBody(setup, { line_items: [{ description: 'Visit', unit_price: 120 }] });
      const { retry } = await cutThenRetry(company, post(company, '/invoices', body, `invoice-${moment}`), moment);
      expect(retry.headers['idempotent-replayed']).toBe(moment === 'after' ? 'true' : undefined);
      expect(retry.body.data.invoice_number).toBe('INV-0001');
      const rows = await direct.database.db.select({ uuid: invoices.uuid }).from(invoices).where(eq(invoices.companyId, company.companyId));
      expect(rows.map((row) => row.uuid)).toEqual([retry.body.data.uuid]);
      const next = await makeInvoiceOf(app, { ...setup, jobUuid: jobs[1] }, 10);
      expect(next.invoice_number).toBe('INV-0002');
    });

    it(`payment create, cut ${moment} the commit (${outcome}); the invoice is paid once`, async () => {
      const company = await makeCompany(direct.database);
      const customer = await makeCustomer(app, company.key);
      const jobUuid = await insertJob(direct.database, company.companyId, customer.uuid);
      const invoice = await makeInvoiceOf(app, { company, customer, jobUuid }, 100);
      const body = { invoice_uuid: invoice.uuid, payment_type: 'cash', amount: 40, payment_date: '2026-11-20' };
      const { retry } = await cutThenRetry(company, post(company, '/payments', body, `payment-${moment}`), moment);
      expect(retry.headers['idempotent-replayed']).toBe(moment === 'after' ? 'true' : undefined);
      expect(retry.body.data.payment_number).toBe('PAY-0001');
      const rows = await direct.database.db.select({ uuid: payments.uuid }).from(payments).where(eq(payments.companyId, company.companyId));
      expect(rows.map((row) => row.uuid)).toEqual([retry.body.data.uuid]);
      const settled = await call(app, 'GET', `/api/v1/invoices/${invoice.uuid}`, { key: company.key });
      expect(settled.body.data.balance_amount).toBe(60);
    });

    it(`webhook delivery retry, cut ${moment} the commit (${outcome})`, async () => {
      const company = await makeCompany(direct.database);
      const endpointUuid = uuidv7();
      await insertEndpoint(direct.database.db, {
        companyId: company.companyId,
        uuid: endpointUuid,
        url: 'https://hooks.example.com/crm',
        events: ['*'],
        secret: 'whsec_commit_cut',
      });
      await recordEvent(direct.database, company.companyId);
      const [delivery] = await direct.database.db
        .select({ uuid: webhookDeliveries.uuid })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.companyId, company.companyId));
      const path = `/webhook_endpoints/${endpointUuid}/deliveries/${delivery!.uuid}/retry`;
      const { retry } = await cutThenRetry(company, post(company, path, undefined, `retry-${moment}`), moment);
      expect(retry.headers['idempotent-replayed']).toBe(moment === 'after' ? 'true' : undefined);
      expect(retry.body.data).toMatchObject({ uuid: delivery!.uuid, status: 'pending' });
    });

    it(`photo upload, cut ${moment} the commit (${outcome}); its files are kept only with their records`, async () => {
      const company = await makeCompany(direct.database);
      const job = await makeJob(app, company.key);
      const { payload, contentType } = await multipartBody([{ name: 'a.png', bytes: PNG_BYTES, type: 'image/png' }]);
      const upload = async () => {
        const response = await app.inject({
          method: 'POST',
          url: `/api/v1/jobs/${job.uuid}/photos`,
          headers: { authorization: `Bearer ${company.key}`, 'content-type': contentType, 'idempotency-key': `photo-${moment}` },
          payload,
        });
        return { status: response.statusCode, body: response.json(), headers: response.headers };
      };
      const { retry } = await cutThenRetry(company, upload, moment);
      expect(retry.headers['idempotent-replayed']).toBe(moment === 'after' ? 'true' : undefined);
      const rows = await direct.database.db.select({ storageKey: jobPhotos.storageKey }).from(jobPhotos).where(eq(jobPhotos.companyId, company.companyId));
      expect(rows).toHaveLength(1);
      // The one file is the record's: the cut request's files went with its uncommitted records, or stayed with its committed ones.
      expect(filesOf(company.companyId)).toEqual([rows[0]!.storageKey]);
    });
  }

  it('keeps the answer of a keyed create in the transaction of its work, numbered documents with their number', async () => {
    const company = await makeCompany(direct.database);
    const customer = await call(app, 'POST', '/api/v1/customers', { key: company.key, body: validCustomer(), headers: { 'idempotency-key': 'kept-1' } });
    const jobUuid = await insertJob(direct.database, company.companyId, customer.body.data.uuid);
    const invoice = await call(app, 'POST', '/api/v1/invoices', {
      key: company.key,
      body: invoiceBody({ company, customer: customer.body.data, jobUuid }, { line_items: [{ description: 'Visit', unit_price: 5 }] }),
      headers: { 'idempotency-key': 'kept-2' },
    });
    expect(invoice.status).toBe(200);
    const kept = await direct.database.db
      .select({ key: idempotencyKeys.key, body: idempotencyKeys.responseBody, record: idempotencyKeys.recordUuid, state: idempotencyKeys.state })
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.companyId, company.companyId));
    const byKey = new Map(kept.map((row) => [row.key, row]));
    expect(byKey.get('kept-1')).toEqual({ key: 'kept-1', body: customer.raw.body, record: customer.body.data.uuid, state: 'completed' });
    expect(byKey.get('kept-2')).toEqual({ key: 'kept-2', body: invoice.raw.body, record: invoice.body.data.uuid, state: 'completed' });
  });
});
