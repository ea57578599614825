/**
 * Idempotency-Key on the POSTs that are not creates, one kind at a time (docs/idempotency.md, "How a key is
 * kept"): work that is one transaction (a delivery retry, a calendar link, a photo upload), work with an
 * outside effect (a document's email, its key held by a transaction that spans the send) and work that writes
 * nothing (the previews and share links). For each: a replay after success, 400 for the key with another
 * request, concurrent requests with one key doing the work once, and no key ever committed in progress, so a
 * request that dies mid-work leaves nothing that makes its retry wait.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { calendarLinks, idempotencyKeys, invoices } from '../src/db/schema/index.js';
import { LEGACY_CLAIM_MS } from '../src/modules/idempotency/idempotency.service.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeBillingSetup, makeInvoiceOf } from './helpers/billing-factories.js';
import { startMailSink } from './helpers/documents.js';
import { makeCompany, validCustomer } from './helpers/factories.js';
import { makeJob, multipartBody, PNG_BYTES } from './helpers/jobs-factories.js';
import { fakeResolver, recordEvent, waitFor } from './helpers/webhooks.js';

const sink = await startMailSink();
/** The mail server as the API reaches it: passed through to the sink, or, while `hang` is set, silent. */
const smtp = await startSmtpFront(Number(new URL(sink.url).port));
const uploadRoot = mkdtempSync(path.join(tmpdir(), 'idempotency-routes-'));
const ctx = await buildTestApp({
  env: { SMTP_URL: smtp.url, UPLOAD_DIR: uploadRoot, WEBHOOK_WORKER_ENABLED: 'false', PHOTO_URL_SECRET: 'idempotency-routes' },
  resolveHost: fakeResolver({ 'hooks.example.com': ['93.184.215.14'] }),
});
await ctx.app.listen({ host: '127.0.0.1', port: 0 });
const port = (ctx.app.server.address() as { port: number }).port;
afterAll(async () => {
  await smtp.close();
  await sink.close();
});

async function startSmtpFront(targetPort: number) {
  const held = new Set<net.Socket>();
  const pass = (socket: net.Socket) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    upstream.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    socket.pipe(upstream).pipe(socket);
  };
  const front = {
    /** Holds new connections: silent, or silent after its greeting. */
    hang: false as false | 'silent' | 'after greeting',
    url: '',
    /** How many connections wait on the silent server. */
    held: () => held.size,
    /** Ends the wait of the connections held while hanging: cut (their sends fail) or passed on to the sink. */
    release(how: 'cut' | 'pass') {
      for (const socket of held) {
        if (how === 'cut') socket.destroy();
        else pass(socket);
      }
      held.clear();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = net.createServer((socket) => {
    socket.on('error', () => undefined);
    if (!front.hang) return pass(socket);
    held.add(socket);
    // Past the greeting, the client waits for its socket timeout (30 s) rather than the greeting's (10 s).
    if (front.hang === 'after greeting') socket.write('220 stalling ESMTP\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  front.url = `smtp://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const close = front.close;
  front.close = async () => {
    front.release('cut');
    await close();
  };
  return front;
}

const keyed = (key: string) => ({ 'idempotency-key': key });
/**
 * Starts a send while the mail server is silent and answers once the send holds its key and waits for the
 * server: its answer to come, and the pid of the backend holding its transaction. Later sends are passed on.
 */
async function startHeldSend<T>(start: () => Promise<T>, hang: 'silent' | 'after greeting' = 'silent'): Promise<{ answer: Promise<T>; holder: number }> {
  smtp.hang = hang;
  const answer = start();
  const holder = await waitFor(() => keyBackend('holding'), 10_000, 'the send holding its key');
  await waitFor(() => smtp.held() > 0 || undefined, 10_000, 'the send waiting for the mail server');
  smtp.hang = false;
  return { answer, holder };
}

/** One photo form (its boundary is random): a retry sends the same bytes. */
const form = await multipartBody([{ name: 'a.png', bytes: PNG_BYTES, type: 'image/png' }]);

/**
 * The backend of a send holding its key (idle in its transaction since it took the key's lock and found the
 * key not completed), or one waiting on that lock.
 */
async function keyBackend(state: 'holding' | 'waiting'): Promise<number | undefined> {
  const rows = (await ctx.database.db.execute(sql`
    select pid from pg_stat_activity
    where datname = current_database()
      and ${state === 'holding'
        ? sql`state = 'idle in transaction' and query ilike 'select %from "idempotency_keys"%'`
        : sql`state = 'active' and wait_event_type = 'Lock' and query ilike 'select pg_advisory_xact_lock(%'`}`)) as unknown as {
    rows: Array<{ pid: number }>;
  };
  return rows.rows[0]?.pid;
}

/** The company's key rows: every one must be completed (none is ever committed in progress). */
async function keyRows(companyId: string) {
  return ctx.database.db
    .select({ key: idempotencyKeys.key, state: idempotencyKeys.state, status: idempotencyKeys.responseStatus })
    .from(idempotencyKeys)
    .where(eq(idempotencyKeys.companyId, companyId));
}

async function expectNoKeyInProgress(companyId: string) {
  expect((await keyRows(companyId)).filter((row) => row.state !== 'completed')).toEqual([]);
}

/** Concurrent requests with one key: every answer is the first one's, and only one of them did the work. */
function expectOneAnswer(responses: Array<{ status: number; body: any; headers: Record<string, unknown> }>) {
  for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(new Set(responses.map((response) => JSON.stringify(response.body))).size).toBe(1);
  expect(responses.filter((response) => response.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
}

describe('work that is one transaction: the key completes in it', () => {
  async function deliverySetup() {
    const company = await makeCompany(ctx.database);
    const endpoint = await call(ctx.app, 'POST', '/api/v1/webhook_endpoints', {
      key: company.key,
      body: { url: 'https://hooks.example.com/crm', events: ['*'] },
    });
    expect(endpoint.status).toBe(200);
    await recordEvent(ctx.database, company.companyId);
    await recordEvent(ctx.database, company.companyId);
    const list = await call(ctx.app, 'GET', `/api/v1/webhook_endpoints/${endpoint.body.data.uuid}/deliveries`, { key: company.key });
    const [first, second] = list.body.data.deliveries as Array<{ uuid: string }>;
    const retry = (delivery: { uuid: string }, key: string) =>
      call(ctx.app, 'POST', `/api/v1/webhook_endpoints/${endpoint.body.data.uuid}/deliveries/${delivery.uuid}/retry`, {
        key: company.key,
        headers: keyed(key),
      });
    return { company, first: first!, second: second!, retry };
  }

  it('a delivery retry: replayed, 409 for another delivery under the key, once when concurrent', async () => {
    const { company, first, second, retry } = await deliverySetup();
    const answer = await retry(first, 'retry-1');
    expect(answer.status).toBe(200);
    const again = await retry(first, 'retry-1');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(answer.body);
    const other = await retry(second, 'retry-1');
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('conflict');
    expect(other.body.error.details[0].field).toBe('Idempotency-Key');

    expectOneAnswer(await Promise.all(Array.from({ length: 6 }, () => retry(second, 'retry-2'))));
    expect((await keyRows(company.companyId)).map((row) => row.key).sort()).toEqual(['retry-1', 'retry-2']);
    await expectNoKeyInProgress(company.companyId);
  });

  it('a calendar link: the replay answers the same link; concurrent requests store one link', async () => {
    const company = await makeCompany(ctx.database);
    const link = (userId: string, key: string) =>
      call(ctx.app, 'POST', `/api/v1/users/${userId}/calendar_link`, { key: company.key, headers: keyed(key) });
    const first = await link(company.userId, 'link-1');
    expect(first.status).toBe(200);
    const again = await link(company.userId, 'link-1');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.data.url).toBe(first.body.data.url);
    expect((await link('019a0000-0000-7000-8000-000000000000', 'link-1')).status).toBe(409);

    expectOneAnswer(await Promise.all(Array.from({ length: 6 }, () => link(company.userId, 'link-2'))));
    const stored = await ctx.database.db.select().from(calendarLinks).where(eq(calendarLinks.companyId, company.companyId));
    expect(stored).toHaveLength(2);
    await expectNoKeyInProgress(company.companyId);
  });

  describe('a photo upload', () => {
    function companyFiles(companyId: string, dir = uploadRoot): string[] {
      if (!existsSync(dir)) return [];
      return readdirSync(dir, { withFileTypes: true })
        .flatMap((entry) => (entry.isDirectory() ? companyFiles(companyId, path.join(dir, entry.name)) : [path.join(dir, entry.name)]))
        .filter((file) => path.relative(uploadRoot, file).startsWith(companyId));
    }

    async function upload(key: string, jobUuid: string, idempotencyKey: string, bytes = PNG_BYTES) {
      const { payload, contentType } = bytes === PNG_BYTES ? form : await multipartBody([{ name: 'a.png', bytes, type: 'image/png' }]);
      const response = await ctx.app.inject({
        method: 'POST',
        url: `/api/v1/jobs/${jobUuid}/photos`,
        headers: { authorization: `Bearer ${key}`, 'content-type': contentType, ...keyed(idempotencyKey) },
        payload,
      });
      return { status: response.statusCode, body: response.json(), headers: response.headers };
    }

    async function photoTotal(key: string, jobUuid: string): Promise<number> {
      return (await call(ctx.app, 'GET', `/api/v1/jobs/${jobUuid}/photos?include_deleted=true`, { key })).body.data.pagination.total;
    }

    it('concurrent uploads with one key store one photo; those that lose the key remove their staged files', async () => {
      const company = await makeCompany(ctx.database);
      const job = await makeJob(ctx.app, company.key);
      const responses = await Promise.all(Array.from({ length: 5 }, () => upload(company.key, job.uuid, 'photos-1')));
      expectOneAnswer(responses);
      expect(await photoTotal(company.key, job.uuid)).toBe(1);
      // A request that lost the key removed its staged files (one that found the key completed answers first).
      await waitFor(() => companyFiles(company.companyId).length === 1 || undefined, 5_000, 'the staged files of the others removed');
      const again = await upload(company.key, job.uuid, 'photos-1');
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(responses[0]!.body);
      const other = await upload(company.key, job.uuid, 'photos-1', Buffer.concat([PNG_BYTES, Buffer.from([0])]));
      expect(other.status).toBe(409);
      await waitFor(() => companyFiles(company.companyId).length === 1 || undefined, 5_000, 'the refused upload’s files removed');
      await expectNoKeyInProgress(company.companyId);
    });

    it('a retry sent with another multipart boundary, as every form client does, is the same request', async () => {
      const company = await makeCompany(ctx.database);
      const job = await makeJob(ctx.app, company.key);
      const first = await upload(company.key, job.uuid, 'photos-boundary');
      expect(first.status).toBe(200);
      const reform = await multipartBody([{ name: 'a.png', bytes: PNG_BYTES, type: 'image/png' }]);
      expect(reform.contentType).not.toBe(form.contentType);
      const again = await ctx.app.inject({
        method: 'POST',
        url: `/api/v1/jobs/${job.uuid}/photos`,
        headers: { authorization: `Bearer ${company.key}`, 'content-type': reform.contentType, ...keyed('photos-boundary') },
        payload: reform.payload,
      });
      expect(again.statusCode).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.body);
      expect(await photoTotal(company.key, job.uuid)).toBe(1);
    });

    it('an upload cut mid-body leaves no key: its retry runs at once', async () => {
      const company = await makeCompany(ctx.database);
      const job = await makeJob(ctx.app, company.key);
      const { payload, contentType } = form;
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST /api/v1/jobs/${job.uuid}/photos HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${company.key}\r\n` +
          `Idempotency-Key: photos-cut\r\nContent-Type: ${contentType}\r\nContent-Length: ${payload.length}\r\n\r\n`,
      );
      socket.write(payload.subarray(0, payload.length - 40));
      await new Promise((resolve) => setTimeout(resolve, 200));
      socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await keyRows(company.companyId)).toEqual([]);

      const started = Date.now();
      const retry = await upload(company.key, job.uuid, 'photos-cut');
      expect(retry.status).toBe(200);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(await photoTotal(company.key, job.uuid)).toBe(1);
      await waitFor(() => companyFiles(company.companyId).length === 1 || undefined, 5_000, 'the cut upload’s files removed');
    });
  });
});

describe('a document send: the key is held by a transaction that spans the email', () => {
  async function draftInvoice() {
    const setup = await makeBillingSetup(ctx.app, ctx.database);
    const invoice = await makeInvoiceOf(ctx.app, setup, 80, { status: 'Draft' });
    const send = (key: string, body: unknown = {}) =>
      call(ctx.app, 'POST', `/api/v1/invoices/${invoice.uuid}/send`, { key: setup.company.key, body, headers: keyed(key) });
    const status = async () =>
      (await ctx.database.db.select({ status: invoices.status }).from(invoices).where(eq(invoices.uuid, invoice.uuid)))[0]!.status;
    return { company: setup.company, invoice, send, status };
  }

  const mailsTo = (address: string) => sink.messages.filter((message) => message.to && JSON.stringify(message.to).includes(address)).length;

  it('is replayed without a second email, 409 with another body, and sent once when concurrent', async () => {
    const { company, send, status } = await draftInvoice();
    const to = `replay-${company.companyId}@example.com`;
    const first = await send('send-1', { to });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await send('send-1', { to });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await send('send-1', { to: `other-${to}` })).status).toBe(409);
    expect(mailsTo(to)).toBe(1);
    expect(await status()).toBe('Pending');

    const concurrent = `concurrent-${company.companyId}@example.com`;
    expectOneAnswer(await Promise.all(Array.from({ length: 5 }, () => send('send-2', { to: concurrent }))));
    expect(mailsTo(concurrent)).toBe(1);
    await expectNoKeyInProgress(company.companyId);
  });

  it('keeps nothing when the mail server refuses (503), so the retry sends', async () => {
    const { company, send, status } = await draftInvoice();
    const to = `refused-${company.companyId}@example.com`;
    sink.refuse = true;
    try {
      expect((await send('send-refused', { to })).status).toBe(503);
    } finally {
      sink.refuse = false;
    }
    expect(await keyRows(company.companyId)).toEqual([]);
    expect(await status()).toBe('Draft');
    const retry = await send('send-refused', { to });
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(mailsTo(to)).toBe(1);
  });

  it.skipIf(!ctx.databaseUrl)('a holder whose database connection dies mid-send leaves no key in progress: the retry runs at once', async () => {
    const { company, send, status } = await draftInvoice();
    const to = `killed-${company.companyId}@example.com`;
    // The holder: a transaction idle since it inserted the key, waiting for the mail server.
    const { answer: stuck, holder } = await startHeldSend(() => send('send-killed', { to }));
    // Held, and seen by no one: nothing is committed in progress.
    expect(await keyRows(company.companyId)).toEqual([]);

    await ctx.database.db.execute(sql`select pg_terminate_backend(${holder})`);
    const started = Date.now();
    const retry = await send('send-killed', { to });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(3_000);

    // The first request's send fails now; its transaction was ended with its connection.
    smtp.release('cut');
    expect((await stuck).status).toBeGreaterThanOrEqual(500);
    expect(mailsTo(to)).toBe(1);
    expect(await status()).toBe('Pending');
    const again = await send('send-killed', { to });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(retry.body);
    expect(await keyRows(company.companyId)).toEqual([{ key: 'send-killed', state: 'completed', status: 200 }]);
  }, 30_000);

  it.skipIf(!ctx.databaseUrl)('a send waiting for the mail server holds no other company’s events feed back', async () => {
    const { company, send } = await draftInvoice();
    const to = `slow-${company.companyId}@example.com`;
    const { answer } = await startHeldSend(() => send('send-slow', { to }));
    try {
      // The holding transaction has no id while it waits: another company's change is in its feed at once.
      const other = await makeCompany(ctx.database);
      const customer = await call(ctx.app, 'POST', '/api/v1/customers', { key: other.key, body: validCustomer() });
      expect(customer.status).toBe(200);
      const feed = await call(ctx.app, 'GET', `/api/v1/events?object_uuid=${customer.body.data.uuid}`, { key: other.key });
      expect(feed.body.data.events.map((event: { type: string }) => event.type)).toEqual(['customer.created']);
    } finally {
      smtp.release('pass');
    }
    expect((await answer).status).toBe(200);
    expect(mailsTo(to)).toBe(1);
  }, 30_000);

  for (const outcome of ['sent', 'failed'] as const) {
    const then = outcome === 'sent' ? 'answers its answer' : 'runs and sends once';
    it.skipIf(!ctx.databaseUrl)(`a request with the key of a send in flight waits on the key; when the send has ${outcome}, it ${then}`, async () => {
      const { company, send } = await draftInvoice();
      const to = `waiting-${outcome}-${company.companyId}@example.com`;
      const { answer: first } = await startHeldSend(() => send(`send-wait-${outcome}`, { to }));
      const second = send(`send-wait-${outcome}`, { to });
      await waitFor(() => keyBackend('waiting'), 5_000, 'the second request waiting on the key');
      smtp.release(outcome === 'sent' ? 'pass' : 'cut');
      const [firstAnswer, secondAnswer] = await Promise.all([first, second]);
      expect(secondAnswer.status, JSON.stringify(secondAnswer.body)).toBe(200);
      if (outcome === 'sent') {
        expect(firstAnswer.status).toBe(200);
        expect(secondAnswer.headers['idempotent-replayed']).toBe('true');
        expect(secondAnswer.body).toEqual(firstAnswer.body);
      } else {
        expect(firstAnswer.status).toBe(503);
        expect(secondAnswer.headers['idempotent-replayed']).toBeUndefined();
      }
      expect(mailsTo(to)).toBe(1);
      await expectNoKeyInProgress(company.companyId);
    }, 30_000);
  }
});

describe('a request waiting on a held key past the statement timeout', () => {
  it.skipIf(!ctx.databaseUrl)('answers 409 (conflict) rather than waiting longer', async () => {
    const setup = await makeBillingSetup(ctx.app, ctx.database);
    const invoice = await makeInvoiceOf(ctx.app, setup, 50, { status: 'Draft' });
    const send = () =>
      call(ctx.app, 'POST', `/api/v1/invoices/${invoice.uuid}/send`, { key: setup.company.key, body: {}, headers: keyed('send-timeout') });
    const { answer: first } = await startHeldSend(send, 'after greeting');
    const started = Date.now();
    const waited = await send();
    expect(waited.status).toBe(409);
    expect(waited.body.error.code).toBe('conflict');
    expect(Date.now() - started).toBeLessThan(15_000);
    // The held send fails (its mail server went away): neither answer is kept, and the retry sends.
    smtp.release('cut');
    expect((await first).status).toBe(503);
    const retry = await send();
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    await expectNoKeyInProgress(setup.company.companyId);
  }, 40_000);
});

describe('work that writes nothing: the answer is kept once made', () => {
  it('a preview and a share link: replayed, 409 for another request, one kept answer when concurrent', async () => {
    const setup = await makeBillingSetup(ctx.app, ctx.database);
    const { key, companyId } = setup.company;
    const preview = (idempotencyKey: string, price: number) =>
      call(ctx.app, 'POST', '/api/v1/invoices/preview', { key, body: { line_items: [{ description: 'Visit', unit_price: price }] }, headers: keyed(idempotencyKey) });
    const first = await preview('preview-1', 10);
    expect(first.status).toBe(200);
    const again = await preview('preview-1', 10);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await preview('preview-1', 11)).status).toBe(409);
    expectOneAnswer(await Promise.all(Array.from({ length: 5 }, () => preview('preview-2', 12))));

    const invoice = await makeInvoiceOf(ctx.app, setup, 30);
    const share = () => call(ctx.app, 'POST', `/api/v1/invoices/${invoice.uuid}/share_link`, { key, headers: keyed('share-1') });
    expectOneAnswer(await Promise.all(Array.from({ length: 5 }, share)));
    expect((await share()).headers['idempotent-replayed']).toBe('true');
    expect((await keyRows(companyId)).map((row) => row.key).sort()).toEqual(['preview-1', 'preview-2', 'share-1']);
    await expectNoKeyInProgress(companyId);
  });
});

describe('a key an older version left in progress', () => {
  it('answers 409 while it may still be running, and is released once older than that version’s bound', async () => {
    const company = await makeCompany(ctx.database);
    const body = validCustomer();
    // The fingerprint of the request below: its method, URL and body bytes.
    const fingerprint = createHash('sha256').update('POST /api/v1/customers\n').update(JSON.stringify(body)).digest('hex');
    const claim = (createdAt: Date) =>
      ctx.database.db
        .insert(idempotencyKeys)
        .values({ companyId: company.companyId, key: 'legacy', fingerprint, state: 'in_progress', createdAt })
        .onConflictDoUpdate({ target: [idempotencyKeys.companyId, idempotencyKeys.key], set: { createdAt } });
    const create = () => call(ctx.app, 'POST', '/api/v1/customers', { key: company.key, body, headers: keyed('legacy') });
    await claim(new Date());
    expect((await create()).status).toBe(409);
    await claim(new Date(Date.now() - LEGACY_CLAIM_MS - 1_000));
    const created = await create();
    expect(created.status).toBe(200);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
    const rows = await ctx.database.db
      .select({ state: idempotencyKeys.state })
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.companyId, company.companyId), eq(idempotencyKeys.key, 'legacy')));
    expect(rows).toEqual([{ state: 'completed' }]);
  });
});
