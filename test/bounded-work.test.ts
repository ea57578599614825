import { readdirSync, readFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { findProgram } from '../scripts/local-cluster.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { companies } from '../src/db/schema/index.js';
import { buildTestApp, call } from './helpers/app.js';
import { insertJob } from './helpers/billing-factories.js';
import { pdfText } from './helpers/documents.js';
import { readFeed, storedEventCount } from './helpers/events.js';
import { makeCompany, makeCustomer, type TestCompany } from './helpers/factories.js';

/**
 * DECISIONS §11: one company, or anyone holding one of its share links, cannot slow every other company
 * down or exhaust the server's memory. Each test measures the bound through HTTP.
 */
const ctx = await buildTestApp({
  env: {
    // Every request renders: the flood measures the renderer, not the cache.
    PDF_CACHE_BYTES: '0',
    PDF_RENDER_THREADS: '1',
    BODY_LIMIT_BYTES: String(4 * 1024 * 1024),
    WEBHOOK_WORKER_ENABLED: 'false',
  },
});
const { app } = ctx;

/** Another app over the same database with other settings. */
async function appWith(env: Record<string, string>): Promise<FastifyInstance> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '0',
    DATA_DIR: 'memory://',
    DATABASE_URL: ctx.databaseUrl,
    WEBHOOK_WORKER_ENABLED: 'false',
    PHOTO_URL_SECRET: 'bounded-work-secret',
    BODY_LIMIT_BYTES: String(4 * 1024 * 1024),
    ...env,
  });
  const other = await buildApp({ config, database: ctx.database });
  await other.ready();
  afterAll(() => other.close());
  return other;
}

/** An invoice of `lines` lines whose descriptions are `width` characters long. */
async function bigInvoice(target: FastifyInstance, company: TestCompany, lines: number, width: number, tag = '') {
  const customer = await makeCustomer(target, company.key);
  const jobUuid = await insertJob(ctx.database, company.companyId, customer.uuid);
  const line_items = Array.from({ length: lines }, (_, index) => ({
    description: `${tag}Line ${index + 1} `.padEnd(width, 'lorem ipsum dolor sit amet '),
    quantity: 1,
    unit_price: 10 + (index % 7),
    tax_rate: 0,
  }));
  const response = await call(target, 'POST', '/api/v1/invoices', { key: company.key, body: { customer_uuid: customer.uuid, job_uuid: jobUuid, due_date: '2030-01-31', line_items } });
  expect(response.status, JSON.stringify(response.body).slice(0, 500)).toBe(200);
  return response.body.data as { uuid: string; invoice_number: string };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

describe('PDFs render off the event loop', () => {
  it("another company's GET keeps answering while 4 clients render a 1,000-line invoice in a loop", { timeout: 120_000 }, async () => {
    const flooder = await makeCompany(ctx.database);
    const invoice = await bigInvoice(app, flooder, 1000, 900);
    const bystander = await makeCompany(ctx.database);
    const customer = await makeCustomer(app, bystander.key);
    const getCustomer = () =>
      app.inject({ method: 'GET', url: `/api/v1/customers/${customer.uuid}`, headers: { authorization: `Bearer ${bystander.key}` } });

    /**
     * Latencies of GETs sent on a fixed schedule, each measured from when it was due (or from the end of the
     * previous one, when that came later): a stalled event loop delays the send and the answer alike, as it
     * would a request waiting in a socket.
     */
    const sample = async (count: number) => {
      const latencies: number[] = [];
      const start = performance.now();
      let previousEnd = start;
      for (let i = 0; i < count; i++) {
        const due = start + i * 100;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const response = await getCustomer();
        expect(response.statusCode).toBe(200);
        const end = performance.now();
        latencies.push(end - Math.max(due, previousEnd));
        previousEnd = end;
      }
      return latencies;
    };
    const alone = await sample(10);

    let flooding = true;
    let rendered = 0;
    const client = async () => {
      while (flooding) {
        const response = await app.inject({
          method: 'GET',
          url: `/api/v1/invoices/${invoice.uuid}/pdf`,
          headers: { authorization: `Bearer ${flooder.key}` },
        });
        expect(response.statusCode, response.body.slice(0, 200)).toBe(200);
        rendered++;
      }
    };
    const clients = Array.from({ length: 4 }, client);
    // Let the pool start its thread and the first renders begin.
    while (rendered === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const during = await sample(40);
    flooding = false;
    await Promise.all(clients);
    const report = `alone ${alone.map(Math.round)} during ${during.map(Math.round)} rendered ${rendered}`;

    // Rendered on the event loop, each render of this invoice stalled every request for 0.6-0.8 s (1.5 s
    // median with four clients). Bounds are generous for a shared machine: what matters is that the
    // bystander's latency does not grow with the flood.
    expect(rendered).toBeGreaterThanOrEqual(4);
    expect(median(during), report).toBeLessThan(Math.max(150, 10 * median(alone)));
    expect(Math.max(...during), report).toBeLessThan(1_000);
  });

  it("a company's renders beyond its share wait in its own line; past the line 503 with Retry-After; the other companies' renders go on", { timeout: 60_000 }, async () => {
    // One process and 3 waiting: a company holds 1 render in the pool and 3 more in its line.
    const busy = await appWith({ PDF_RENDER_THREADS: '1', PDF_RENDER_QUEUE: '3', PDF_CACHE_BYTES: '0' });
    const flooder = await makeCompany(ctx.database);
    const invoices = [];
    for (let i = 0; i < 6; i++) invoices.push(await bigInvoice(busy, flooder, 300, 200, `Invoice ${i} `));
    const other = await makeCompany(ctx.database);
    const othersInvoice = await bigInvoice(busy, other, 3, 20);
    const pdf = (key: string, uuid: string) => busy.inject({ method: 'GET', url: `/api/v1/invoices/${uuid}/pdf`, headers: { authorization: `Bearer ${key}` } });

    const flood = Promise.all(invoices.map((invoice) => pdf(flooder.key, invoice.uuid)));
    const others = await pdf(other.key, othersInvoice.uuid);
    const responses = await flood;
    expect(others.statusCode, others.body.slice(0, 200)).toBe(200);

    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 200), statuses.join(',')).toHaveLength(4);
    expect(statuses.filter((status) => status === 503), statuses.join(',')).toHaveLength(2);
    for (const response of responses.filter((candidate) => candidate.statusCode === 503)) {
      expect(response.headers['retry-after']).toMatch(/^\d+$/);
      expect(response.json()).toMatchObject({ success: false, error: { code: 'service_unavailable', message: expect.stringMatching(/retry/i) } });
    }
    for (const response of [...responses.filter((candidate) => candidate.statusCode === 200), others]) {
      expect(response.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    }
    // Each served PDF is its own invoice's: four different documents.
    const served = responses.filter((candidate) => candidate.statusCode === 200).map((response) => response.rawPayload.toString('base64'));
    expect(new Set(served).size).toBe(4);
  });

  it('a client fetching many different PDFs at once is served every one with the default settings', { timeout: 60_000 }, async () => {
    const company = await makeCompany(ctx.database);
    const invoices = [];
    for (let i = 0; i < 10; i++) invoices.push(await bigInvoice(app, company, 2, 20, `Batch ${i} `));
    const responses = await Promise.all(
      invoices.map((invoice) => app.inject({ method: 'GET', url: `/api/v1/invoices/${invoice.uuid}/pdf`, headers: { authorization: `Bearer ${company.key}` } })),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(Array(10).fill(200));
    for (const response of responses) expect(response.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it("a large document's share page is built off the event loop too", { timeout: 60_000 }, async () => {
    const company = await makeCompany(ctx.database);
    const invoice = await bigInvoice(app, company, 1000, 300, 'Large ');
    const link = await call(app, 'POST', `/api/v1/invoices/${invoice.uuid}/share_link`, { key: company.key });
    const before = app.documentRenderer.completed;
    const page = await app.inject({ method: 'GET', url: new URL(link.body.data.url).pathname });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('Large Line 1000 ');
    expect(app.documentRenderer.completed).toBe(before + 1);
  });

  it.runIf(process.platform === 'linux')('renders in a process of its own, every thread of which yields to the event loop (Linux SCHED_IDLE, else niceness 10)', { timeout: 60_000 }, async () => {
    const company = await makeCompany(ctx.database);
    const invoice = await bigInvoice(app, company, 3, 20);
    const response = await app.inject({ method: 'GET', url: `/api/v1/invoices/${invoice.uuid}/pdf`, headers: { authorization: `Bearer ${company.key}` } });
    expect(response.statusCode).toBe(200);
    expect(response.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');

    const hasChrt = findProgram('chrt') !== null;
    /** The fields of /proc/<pid>[/task/<tid>]/stat after the command name. */
    const statFields = (path: string) => {
      const stat = readFileSync(path, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    };
    const renderProcesses = readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return Number(statFields(`/proc/${pid}/stat`)[1]) === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('tinypool');
        } catch {
          return false; // a process that ended while listed
        }
      });
    expect(renderProcesses.length).toBeGreaterThanOrEqual(1);
    for (const pid of renderProcesses) {
      const threads = readdirSync(`/proc/${pid}/task`).map((thread) => statFields(`/proc/${pid}/task/${thread}/stat`));
      expect(threads.length).toBeGreaterThan(1);
      // Field 41 of stat, the scheduling policy: 5 is SCHED_IDLE, which needs util-linux's chrt (the image has it).
      const policies = new Set(threads.map((fields) => Number(fields[38])));
      expect(policies).toEqual(new Set([hasChrt ? 5 : 0]));
      expect(new Set(threads.map((fields) => Number(fields[16])))).toEqual(new Set([10]));
    }
    // The server's own threads keep their priority.
    const own = readdirSync('/proc/self/task').map((thread) => statFields(`/proc/self/task/${thread}/stat`));
    expect(new Set(own.map((fields) => Number(fields[16])))).toEqual(new Set([0]));
    expect(new Set(own.map((fields) => Number(fields[38])))).toEqual(new Set([0]));
  });

  it.runIf(process.platform === 'linux')('a render whose process dies is tried once more in a new one; one that loses two answers 503 with Retry-After', { timeout: 180_000 }, async () => {
    // Seven renders of a 1,000-line invoice and as many render processes started: a minute or more on a busy host.
    const company = await makeCompany(ctx.database);
    const invoice = await bigInvoice(app, company, 1000, 300, 'Killed ');
    const pdf = () => app.inject({ method: 'GET', url: `/api/v1/invoices/${invoice.uuid}/pdf`, headers: { authorization: `Bearer ${company.key}` } });
    const renderProcesses = () =>
      readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('tinypool') && readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(process.pid);
          } catch {
            return false; // a process that ended while listed
          }
        })
        .map(Number);
    const killAll = () => {
      const pids = renderProcesses();
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      return pids;
    };
    // A first render starts the process, so the second finds it ready and is killed once while laying out.
    expect((await pdf()).statusCode).toBe(200);
    const retried = pdf();
    await new Promise((resolve) => setTimeout(resolve, 150));
    const killedOnce = killAll();
    expect(killedOnce.length).toBeGreaterThanOrEqual(1);
    const afterOneKill = await retried;
    expect(afterOneKill.statusCode, afterOneKill.body.slice(0, 300)).toBe(200);
    expect(afterOneKill.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    expect(renderProcesses().some((pid) => !killedOnce.includes(pid))).toBe(true);

    // Every process it meets is killed: after its second try it is refused, and asked to come back.
    let answered = false;
    const doomed = pdf().finally(() => (answered = true));
    while (!answered) {
      killAll();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const killed = await doomed;
    expect(killed.statusCode, killed.body.slice(0, 300)).toBe(503);
    expect(killed.headers['retry-after'], killed.body.slice(0, 300)).toMatch(/^\d+$/);
    expect(killed.json()).toMatchObject({ success: false, error: { code: 'service_unavailable', message: expect.stringMatching(/renderer stopped.*retry/i) } });

    const again = await pdf();
    expect(again.statusCode).toBe(200);
    expect(again.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');

    // One that dies idle is replaced too, and the server goes on (an unheard pool error would end it), even
    // when the next render is handed over before the pool has seen the process end.
    const idle = killAll();
    expect(idle.length).toBeGreaterThanOrEqual(1);
    const afterIdleKill = await pdf();
    expect(afterIdleKill.statusCode).toBe(200);
    expect(renderProcesses().some((pid) => !idle.includes(pid))).toBe(true);

    // One that dies while starting up leaves the render queued for the next process, not waiting forever.
    killAll();
    while (renderProcesses().length > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const queued = pdf();
    let starting: number[] = [];
    while (starting.length === 0) {
      starting = renderProcesses();
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const pid of starting) process.kill(pid, 'SIGKILL');
    const afterStartupKill = await queued;
    expect(afterStartupKill.statusCode, afterStartupKill.body.slice(0, 300)).toBe(200);
    expect(afterStartupKill.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('serves an unchanged document from the cache, and never a stale one', async () => {
    const cached = await appWith({ PDF_CACHE_BYTES: String(8 * 1024 * 1024) });
    const company = await makeCompany(ctx.database);
    const invoice = await bigInvoice(cached, company, 5, 40);
    const pdf = async () => {
      const response = await cached.inject({ method: 'GET', url: `/api/v1/invoices/${invoice.uuid}/pdf`, headers: { authorization: `Bearer ${company.key}` } });
      expect(response.statusCode).toBe(200);
      return response.rawPayload;
    };
    const first = await pdf();
    const completed = () => cached.documentRenderer.completed;
    const rendersBefore = completed();
    // A render a second later would differ in its creation date: the same bytes come from the cache.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await pdf()).equals(first)).toBe(true);
    expect(completed()).toBe(rendersBefore);

    // A change the invoice record does not show (the company's name) is in the PDF at once.
    await ctx.database.db.update(companies).set({ name: 'Renamed Plumbing Co' }).where(eq(companies.uuid, company.companyId));
    const renamed = await pdf();
    expect(completed()).toBe(rendersBefore + 1);
    expect(await pdfText(renamed)).toContain('Renamed Plumbing Co');
    // And so is a change of the record.
    const updated = await call(cached, 'PATCH', `/api/v1/invoices/${invoice.uuid}`, { key: company.key, body: { notes: 'Paid by check 1234' } });
    expect(updated.status).toBe(200);
    expect(await pdfText(await pdf())).toContain('Paid by check 1234');
  });
});

describe('the keyless routes share one rate limit per client address', () => {
  /** A company with an invoice and an estimate-free share link to the invoice. */
  async function sharedInvoice(target: FastifyInstance) {
    const company = await makeCompany(ctx.database);
    const invoice = await bigInvoice(target, company, 2, 20);
    const link = await call(target, 'POST', `/api/v1/invoices/${invoice.uuid}/share_link`, { key: company.key });
    expect(link.status).toBe(200);
    return new URL(link.body.data.url).pathname;
  }

  const from = (target: FastifyInstance, remoteAddress: string, url: string, init: { method?: 'GET' | 'HEAD' | 'POST'; form?: string; json?: unknown } = {}) =>
    target.inject({
      method: init.method ?? 'GET',
      url,
      remoteAddress,
      ...(init.form !== undefined
        ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: init.form }
        : init.json !== undefined
          ? { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(init.json) }
          : {}),
    });

  it('429 rate_limited with Retry-After past SHARE_RATE_LIMIT_PER_MINUTE: HTML for the page and its forms, the envelope for PDFs and JSON', async () => {
    const limited = await appWith({ SHARE_RATE_LIMIT_PER_MINUTE: '3' });
    const page = await sharedInvoice(limited);
    const address = '203.0.113.10';
    // Page, PDF and an answer count together.
    expect((await from(limited, address, page)).statusCode).toBe(200);
    expect((await from(limited, address, `${page}/pdf`)).statusCode).toBe(200);
    expect((await from(limited, address, '/share/estimates/not-a-token')).statusCode).toBe(404);

    const refusedPage = await from(limited, address, page);
    expect(refusedPage.statusCode).toBe(429);
    expect(refusedPage.headers['content-type']).toMatch(/^text\/html/);
    expect(refusedPage.body).toMatch(/Too many requests/);
    expect(Number(refusedPage.headers['retry-after'])).toBeGreaterThan(0);
    // HEAD of the page answers the headers its GET would: the HTML page's.
    const refusedHead = await from(limited, address, page, { method: 'HEAD' });
    expect(refusedHead.statusCode).toBe(429);
    expect(refusedHead.headers['content-type']).toMatch(/^text\/html/);
    expect(Number(refusedHead.headers['retry-after'])).toBeGreaterThan(0);

    const refusedPdf = await from(limited, address, `${page}/pdf`);
    expect(refusedPdf.statusCode).toBe(429);
    expect(refusedPdf.headers['retry-after']).toMatch(/^\d+$/);
    expect(refusedPdf.json()).toMatchObject({ success: false, error: { code: 'rate_limited', message: expect.stringMatching(/retry in \d+ s/) } });

    const refusedJson = await from(limited, address, '/share/estimates/not-a-token/accept', { method: 'POST', json: { signature_name: 'Dana' } });
    expect(refusedJson.statusCode).toBe(429);
    expect(refusedJson.json().error.code).toBe('rate_limited');
    const refusedForm = await from(limited, address, '/share/estimates/not-a-token/decline', { method: 'POST', form: 'response_notes=no' });
    expect(refusedForm.statusCode).toBe(429);
    expect(refusedForm.headers['content-type']).toMatch(/^text\/html/);

    // Per address: another client is not affected; and the API's keyed routes are not counted here.
    expect((await from(limited, '203.0.113.11', page)).statusCode).toBe(200);
  });

  it('counts across instances through Redis when REDIS_URL is set', async () => {
    const redisUrl = process.env.REDIS_URL;
    if (!redisUrl) return;
    const first = await appWith({ SHARE_RATE_LIMIT_PER_MINUTE: '4', REDIS_URL: redisUrl });
    const second = await appWith({ SHARE_RATE_LIMIT_PER_MINUTE: '4', REDIS_URL: redisUrl });
    const page = await sharedInvoice(first);
    // A fresh address per run: the Redis window outlives the test.
    const address = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
    const statuses = [];
    for (const target of [first, second, first, second, first, second]) statuses.push((await from(target, address, page)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('0 turns the limit off', async () => {
    const page = await sharedInvoice(app);
    for (let i = 0; i < 70; i++) expect((await from(app, '203.0.113.50', page)).statusCode).toBe(200);
  });
});

describe('feed pages are bounded in bytes', () => {
  it('twenty-four 60 KiB records: a page stops before 1 MiB with has_more; a follower still sees every event once', { timeout: 60_000 }, async () => {
    const company = await makeCompany(ctx.database);
    for (let i = 0; i < 24; i++) await bigInvoice(app, company, 60, 1000, `Invoice ${i} `);
    const stored = await readFeed(app, company.key, { type: 'invoice.created' });
    expect(stored).toHaveLength(24);
    for (const event of stored) expect(JSON.stringify(event).length).toBeGreaterThan(60 * 1024);

    const first = await app.inject({
      method: 'GET',
      url: '/api/v1/events?limit=100&type=invoice.created',
      headers: { authorization: `Bearer ${company.key}` },
    });
    expect(first.statusCode).toBe(200);
    const page = first.json().data;
    expect(page.has_more).toBe(true);
    expect(page.events.length).toBeGreaterThan(1);
    expect(page.events.length).toBeLessThan(24);
    const eventBytes = page.events.reduce((sum: number, event: unknown) => sum + Buffer.byteLength(JSON.stringify(event)), 0);
    expect(eventBytes).toBeLessThanOrEqual(1024 * 1024);
    // It stopped before the event that would pass 1 MiB.
    expect(eventBytes + Buffer.byteLength(JSON.stringify(stored[page.events.length]))).toBeGreaterThan(1024 * 1024);
    expect(page.events.map((event: { uuid: string }) => event.uuid)).toEqual(stored.slice(0, page.events.length).map((event) => event.uuid));

    // A follower paging with after sees every event (customers, invoices, their jobs moved), once each.
    const followed = await readFeed(app, company.key);
    const total = await storedEventCount(ctx.database, company.companyId);
    expect(followed).toHaveLength(total);
    expect(new Set(followed.map((event) => event.uuid)).size).toBe(total);
  });

  it('an event larger than 1 MiB is served alone on its page and by GET /events/{uuid}', { timeout: 60_000 }, async () => {
    const company = await makeCompany(ctx.database);
    const huge = await bigInvoice(app, company, 1000, 1000);
    await bigInvoice(app, company, 2, 20);
    const feed = await readFeed(app, company.key, { type: 'invoice.created' });
    expect(feed).toHaveLength(2);
    const first = await app.inject({ method: 'GET', url: '/api/v1/events?type=invoice.created', headers: { authorization: `Bearer ${company.key}` } });
    const page = first.json().data;
    expect(page.events.map((event: { object_uuid: string }) => event.object_uuid)).toEqual([huge.uuid]);
    expect(page.has_more).toBe(true);
    expect(first.body.length).toBeGreaterThan(1024 * 1024);
    const one = await call(app, 'GET', `/api/v1/events/${feed[0].uuid}`, { key: company.key });
    expect(one.status).toBe(200);
    expect(one.body.data.data.object.line_items).toHaveLength(1000);
  });
});
