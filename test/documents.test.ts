import { and, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { companies, estimates, invoices, jobs } from '../src/db/schema/index.js';
import { UrlSigner } from '../src/storage/url-signer.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeInvoice, makePayment } from './helpers/billing-factories.js';
import { pdfPages, pdfText, shareUrlIn, startMailSink } from './helpers/documents.js';
import { readFeed } from './helpers/events.js';
import { insertJob, makeEstimate, makeTemplate, tieredTemplate } from './helpers/estimates-factories.js';
import { makeCompany, makeCustomer, type TestCompany } from './helpers/factories.js';
import type { JobStatus } from '../src/db/schema/index.js';

const sink = await startMailSink();
afterAll(() => sink.close());

const ctx = await buildTestApp({ env: { SMTP_URL: sink.url, PHOTO_URL_SECRET: 'documents-test-secret' } });
const app = ctx.app;

/** Another app over the same database with other settings (SMTP, link lifetime, base URL). */
async function appWith(env: Record<string, string>): Promise<FastifyInstance> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '0',
    DATA_DIR: 'memory://',
    DATABASE_URL: ctx.databaseUrl,
    PHOTO_URL_SECRET: 'documents-test-secret',
    ...env,
  });
  const other = await buildApp({ config, database: ctx.database });
  await other.ready();
  afterAll(() => other.close());
  return other;
}

const api = (key: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) =>
  call(app, method, `/api/v1${path}`, { key, body });
const pathOf = (url: string) => new URL(url).pathname;
const money = (value: number) => value.toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

async function getRaw(target: FastifyInstance, url: string, key?: string) {
  return target.inject({ method: 'GET', url, headers: key ? { authorization: `Bearer ${key}` } : {} });
}

async function pdfOf(key: string, path: string): Promise<Buffer> {
  const response = await getRaw(app, `/api/v1${path}`, key);
  expect(response.statusCode, response.body).toBe(200);
  expect(response.headers['content-type']).toBe('application/pdf');
  expect(response.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
  return response.rawPayload;
}

async function giveCompanyAddress(company: TestCompany) {
  await ctx.database.db
    .update(companies)
    .set({ name: `Reyes Plumbing ${company.companyId.slice(-4)}`, phone: '512-555-0100', addressLine1: '100 Congress Ave', city: 'Austin', state: 'TX', postalCode: '78701' })
    .where(eq(companies.uuid, company.companyId));
  return `Reyes Plumbing ${company.companyId.slice(-4)}`;
}

interface EstimateSetup {
  company: TestCompany;
  customer: { uuid: string; first_name: string; last_name: string; email: string | null };
  template: { uuid: string };
  estimate: any;
  jobUuid: string;
}

/** A company, a customer with an email, a tiered template (8.25 % tax) and a Pending estimate on a New job. */
async function estimateSetup(estimateFields: Record<string, unknown> = {}, jobStatus: JobStatus = 'New'): Promise<EstimateSetup> {
  const company = await makeCompany(ctx.database);
  await giveCompanyAddress(company);
  const customer = await makeCustomer(app, company.key, {
    email: 'dana@example.com',
    physical_address1: '12 Elm St',
    physical_city: 'Austin',
    physical_state: 'TX',
    physical_zip: '78702',
  });
  const template = await makeTemplate(app, company.key, tieredTemplate({ tax_rate: 8.25 }));
  const job = await insertJob(ctx.database, company.companyId, customer.uuid);
  if (jobStatus !== 'New') {
    await ctx.database.db.update(jobs).set({ status: jobStatus }).where(and(eq(jobs.companyId, company.companyId), eq(jobs.uuid, job.uuid)));
  }
  const estimate = await makeEstimate(app, company.key, {
    customer_uuid: customer.uuid,
    template_uuid: template.uuid,
    job_uuid: job.uuid,
    selected_tier: 'good',
    service_description: 'Replace the 40-gallon water heater',
    ...estimateFields,
  });
  return { company, customer, template, estimate, jobUuid: job.uuid };
}

async function shareLink(key: string, kind: 'estimates' | 'invoices', uuid: string, target: FastifyInstance = app) {
  const response = await call(target, 'POST', `/api/v1/${kind}/${uuid}/share_link`, { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as { url: string; expires_at: string };
}

const accept = (pagePath: string, body: unknown, target: FastifyInstance = app) => call(target, 'POST', `${pagePath}/accept`, { body });
const decline = (pagePath: string, body: unknown) => call(app, 'POST', `${pagePath}/decline`, { body });
const postForm = (url: string, form: string) =>
  app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form });

async function readEstimate(key: string, uuid: string) {
  const response = await api(key, 'GET', `/estimates/${uuid}`);
  expect(response.status).toBe(200);
  return response.body.data;
}

/** The record's events once one of `type` is visible in the feed (events show once earlier transactions end). */
async function waitForEvent(key: string, objectUuid: string, type: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const events = await readFeed(app, key, { object_uuid: objectUuid });
    if (events.some((event) => event.type === type) || Date.now() > deadline) return events.filter((event) => event.type === type);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function jobStatus(companyId: string, uuid: string) {
  const [row] = await ctx.database.db.select().from(jobs).where(and(eq(jobs.companyId, companyId), eq(jobs.uuid, uuid)));
  return row!.status;
}

async function invoiceSetup() {
  const company = await makeCompany(ctx.database);
  const companyName = await giveCompanyAddress(company);
  const customer = await makeCustomer(app, company.key, { first_name: 'Morgan', last_name: 'Quinn', email: 'morgan@example.com' });
  const jobUuid = await insertJob(ctx.database, company.companyId, customer.uuid).then((job) => job.uuid);
  const setup = { company, customer, jobUuid };
  return { ...setup, companyName };
}

describe('GET /api/v1/invoices/{uuid}/pdf', () => {
  it('prints names, lines and notes beyond Windows-1252 as stored (Polish, Greek, Cyrillic), beside plain ones', async () => {
    const setup = await invoiceSetup();
    const customer = await makeCustomer(app, setup.company.key, { first_name: 'Łukasz', last_name: 'Żółć-Müller' });
    const jobUuid = (await insertJob(ctx.database, setup.company.companyId, customer.uuid)).uuid;
    const invoice = await makeInvoice(app, { ...setup, customer, jobUuid }, {
      line_items: [
        { description: 'Wymiana zaworu – łazienka', quantity: 1, unit_price: 120, tax_rate: 0 },
        { description: 'Επισκευή θερμοσίφωνα', quantity: 1, unit_price: 80.5, tax_rate: 0 },
        { description: 'Ремонт бойлера', quantity: 2, unit_price: 10.25, tax_rate: 0 },
        { description: 'Café crème – €5 off next visit', quantity: 1, unit_price: 1, tax_rate: 0 },
      ],
      notes: 'Dziękujemy · Ευχαριστούμε · Спасибо',
    });
    const text = await pdfText(await pdfOf(setup.company.key, `/invoices/${invoice.uuid}/pdf`));
    for (const shown of ['Łukasz Żółć-Müller', 'Wymiana zaworu – łazienka', 'Επισκευή θερμοσίφωνα', 'Ремонт бойлера', 'Café crème – €5 off next visit', 'Dziękujemy · Ευχαριστούμε · Спасибо']) {
      expect(text).toContain(shown);
    }
    expect(text).toContain('20.50');
  });

  it('shows the company, number, customer, each line and the totals exactly as the JSON has them', async () => {
    const setup = await invoiceSetup();
    const invoice = await makeInvoice(app, setup, {
      line_items: [
        { description: 'Water heater, 50 gal', quantity: 1, unit_price: 899.99, tax_rate: 8.25 },
        { description: 'Labor (hours)', quantity: 2.5, unit_price: 95, tax_rate: 0 },
        { description: 'Expansion tank', quantity: 3, unit_price: 33.33, tax_rate: 8.25 },
      ],
      discount_amount: 25.5,
      notes: 'Thank you for your business.',
      terms: 'Net 30',
    });
    await makePayment(app, setup.company.key, invoice.uuid, 300);
    const { body } = await api(setup.company.key, 'GET', `/invoices/${invoice.uuid}`);
    const current = body.data;
    expect(current.paid_amount).toBe(300);

    const text = await pdfText(await pdfOf(setup.company.key, `/invoices/${invoice.uuid}/pdf`));
    expect(text).toContain(setup.companyName);
    expect(text).toContain('100 Congress Ave');
    expect(text).toContain(current.invoice_number);
    expect(text).toContain('Morgan Quinn');
    // Each line: quantity, unit price, tax rate, its tax and its total, as the record has them.
    for (const line of current.line_items) {
      const cells = [line.quantity, money(line.unit_price), line.tax_rate, money(line.tax_amount), money(line.line_total)].map((cell) => String(cell).replace('.', '\\.'));
      expect(text).toMatch(new RegExp(`${line.description.replace(/[()]/g, '\\$&')}\\s+${cells.join('\\s+')}`));
    }
    expect(current.line_items.map((line: { tax_amount: number }) => line.tax_amount)).toEqual([74.25, 0, 8.25]);
    expect(text).toMatch(new RegExp(`Issue date\\s+${current.issue_date}`));
    expect(text).toMatch(new RegExp(`Due date\\s+${current.due_date}`));
    // 899.99 + 237.50 + 99.99 = 1,237.48; tax 74.25 + 8.25 = 82.50; total 1,294.48; balance 994.48
    expect(current.subtotal).toBe(1237.48);
    expect(current.balance_amount).toBe(994.48);
    const row = (label: string, value: number) => expect(text).toMatch(new RegExp(`${label}\\s+-?${money(value).replace('.', '\\.')}\\b`));
    row('Subtotal', current.subtotal);
    row('Tax', current.tax_amount);
    row('Discount', current.discount_amount);
    row('Total', current.total_amount);
    row('Paid', current.paid_amount);
    row('Balance due', current.balance_amount);
    expect(text).toContain('1,294.48');
    expect(text).toContain('Thank you for your business.');
    expect(text).toContain('Net 30');
  });

  it('flows a 60-line invoice onto further pages with the table header repeated', async () => {
    const setup = await invoiceSetup();
    const lines = Array.from({ length: 60 }, (_, index) => ({ description: `Fitting number ${index + 1}`, quantity: 1, unit_price: 10 + index }));
    const invoice = await makeInvoice(app, setup, { line_items: lines });
    const pages = await pdfPages(await pdfOf(setup.company.key, `/invoices/${invoice.uuid}/pdf`));
    expect(pages.length).toBeGreaterThanOrEqual(2);
    for (const page of pages.slice(0, -1)) expect(page).toMatch(/Description\s+Qty\s+Unit price\s+Tax %\s+Tax\s+Amount/);
    const all = pages.join('\n');
    for (let index = 1; index <= 60; index++) expect(all).toMatch(new RegExp(`Fitting number ${index}\\s`));
    expect(pages[0]).toContain(`page 1 of ${pages.length}`);
    expect(pages[1]).toContain(`Invoice ${invoice.invoice_number} (continued)`);
    // 60 x 10 + (0 + ... + 59) = 2,370.00
    expect(pages.at(-1)).toMatch(/Total\s+2,370\.00/);
  });

  it('is made from the current record on each request', async () => {
    const setup = await invoiceSetup();
    const invoice = await makeInvoice(app, setup, { line_items: [{ description: 'First visit', unit_price: 100 }] });
    expect(await pdfText(await pdfOf(setup.company.key, `/invoices/${invoice.uuid}/pdf`))).toContain('First visit');
    const updated = await api(setup.company.key, 'PUT', `/invoices/${invoice.uuid}`, { line_items: [{ description: 'Second visit', unit_price: 1082.5 }] });
    expect(updated.status).toBe(200);
    const text = await pdfText(await pdfOf(setup.company.key, `/invoices/${invoice.uuid}/pdf`));
    expect(text).toContain('Second visit');
    expect(text).not.toContain('First visit');
    expect(text).toMatch(/Total\s+1,082\.50/);
  });

  it('answers errors in the JSON envelope: 401 without a key, 404 missing or deleted, 400 for a malformed id', async () => {
    const setup = await invoiceSetup();
    const invoice = await makeInvoice(app, setup, { line_items: [{ description: 'Visit', unit_price: 100 }] });
    const noKey = await call(app, 'GET', `/api/v1/invoices/${invoice.uuid}/pdf`);
    expect(noKey.status).toBe(401);
    expect(noKey.body.error.code).toBe('unauthorized');
    const bad = await api(setup.company.key, 'GET', '/invoices/not-a-uuid/pdf');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');
    expect((await api(setup.company.key, 'DELETE', `/invoices/${invoice.uuid}`)).status).toBe(200);
    const deleted = await api(setup.company.key, 'GET', `/invoices/${invoice.uuid}/pdf`);
    expect(deleted.status).toBe(404);
    expect(deleted.headers['content-type']).toContain('application/json');
    expect(deleted.body).toMatchObject({ success: false, error: { code: 'not_found' } });
  });
});

describe('GET /api/v1/estimates/{uuid}/pdf', () => {
  it('shows the tier, the add-ons, the adjustments and the amounts', async () => {
    const setup = await estimateSetup({
      selected_tier: 'better',
      quantity: 2,
      selected_addons: ['permit', 'haul'],
      adjustments: { tax_amount: 100.1 },
      customer_notes: 'Gas shut-off needed.',
      expires_at: '2099-01-31T00:00:00Z',
    });
    const estimate = setup.estimate;
    // base 1500 x 2 = 3000; add-ons 75 + 49.99 = 124.99; tax replaced by 100.10; total 3,225.09
    expect(estimate).toMatchObject({ base_amount: 3000, addons_amount: 124.99, tax_amount: 100.1, total_amount: 3225.09 });
    const text = await pdfText(await pdfOf(setup.company.key, `/estimates/${estimate.uuid}/pdf`));
    expect(text).toContain(estimate.estimate_number);
    expect(text).toContain(`${setup.customer.first_name} ${setup.customer.last_name}`);
    expect(text).toContain('12 Elm St');
    expect(text).toMatch(/Water heater install - Better tier\s+2\s+3,000\.00/);
    expect(text).toMatch(/Add-on: City permit\s+1\s+75\.00/);
    expect(text).toMatch(/Add-on: Haul away old unit\s+1\s+49\.99/);
    expect(text).toContain('Tax adjusted to 100.10');
    expect(text).toMatch(/Good 1,000\.00\s+Better 1,500\.00\s+Best 2,250\.50/);
    expect(text).toMatch(/Base amount\s+3,000\.00/);
    expect(text).toMatch(/Add-ons\s+124\.99/);
    expect(text).toMatch(/Tax\s+100\.10/);
    expect(text).toMatch(/Total\s+3,225\.09/);
    expect(text).toContain('Gas shut-off needed.');
    // The dates exactly as the record has them.
    expect(text).toMatch(new RegExp(`Date\\s+${estimate.created_at.slice(0, 10)}`));
    expect(text).toMatch(/Valid until\s+2099-01-31/);
  });
});

describe('share links', () => {
  it('open the customer page and its PDF without a key', async () => {
    const setup = await estimateSetup();
    const before = Date.now();
    const link = await shareLink(setup.company.key, 'estimates', setup.estimate.uuid);
    expect(link.url).toMatch(/^http:\/\/localhost(:\d+)?\/share\/estimates\/[A-Za-z0-9_-]+\.\d+\.[A-Za-z0-9_-]{43}$/);
    const lifetime = Date.parse(link.expires_at) - before;
    expect(lifetime).toBeGreaterThan(2592000_000 - 5000);
    expect(lifetime).toBeLessThanOrEqual(2592000_000 + 1000);

    const page = await getRaw(app, pathOf(link.url));
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).toMatch(/style-src 'nonce-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toContain('script-src');
    const nonce = /'nonce-([^']+)'/.exec(csp)![1];
    expect(page.body).toContain(`<style nonce="${nonce}">`);
    expect(page.body).not.toMatch(/<script|https?:\/\/(?!localhost)/);
    expect(page.body).toContain('Reyes Plumbing');
    expect(page.body).toContain(`${setup.customer.first_name} ${setup.customer.last_name}`);
    expect(page.body).toContain(`Estimate ${setup.estimate.estimate_number}`);
    // good tier 1,000.00 + 8.25 % = 82.50 -> 1,082.50
    expect(page.body).toContain('$1,000.00');
    expect(page.body).toContain('$82.50');
    expect(page.body).toContain('$1,082.50');
    expect(page.body).toContain(`href="${link.url}/pdf"`);
    expect(page.body).toMatch(/<label class="field" for="signature_name">/);
    expect(page.body).toContain(`action="${pathOf(link.url)}/accept"`);
    expect(page.body).toContain(`action="${pathOf(link.url)}/decline"`);

    const pdf = await getRaw(app, `${pathOf(link.url)}/pdf`);
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(await pdfText(pdf.rawPayload)).toContain(setup.estimate.estimate_number);
  });

  it('of invoices show the invoice and its amounts', async () => {
    const setup = await invoiceSetup();
    const invoice = await makeInvoice(app, setup, {
      line_items: [{ description: 'Drain cleaning', unit_price: 1000, tax_rate: 8.25 }],
      notes: 'Thanks!',
    });
    const link = await shareLink(setup.company.key, 'invoices', invoice.uuid);
    expect(link.url).toContain('/share/invoices/');
    const page = await getRaw(app, pathOf(link.url));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`Invoice ${invoice.invoice_number}`);
    expect(page.body).toContain('Morgan Quinn');
    expect(page.body).toContain('Drain cleaning');
    // The line's unit price, tax and total, then the invoice's total; the dates as the record has them.
    expect(page.body).toMatch(/Drain cleaning<\/td><td class="num">1<\/td><td class="num">\$1,000\.00<\/td><td class="num">\$82\.50<\/td><td class="num">\$1,000\.00<\/td>/);
    expect(page.body).toContain('$1,082.50');
    expect(page.body).toContain(invoice.issue_date);
    expect(page.body).toContain(invoice.due_date);
    expect(page.body).toContain(`href="${link.url}/pdf"`);
    expect(page.body).not.toContain('<form');
    const pdf = await getRaw(app, `${pathOf(link.url)}/pdf`);
    expect(pdf.statusCode).toBe(200);
    expect(await pdfText(pdf.rawPayload)).toMatch(/Balance due\s+1,082\.50/);
    // An invoice token does not open an estimate page, and the estimate pages take no invoice tokens.
    const token = pathOf(link.url).split('/').at(-1);
    expect((await getRaw(app, `/share/estimates/${token}`)).statusCode).toBe(404);
  });

  it('use PUBLIC_BASE_URL as their base when it is set', async () => {
    const other = await appWith({ PUBLIC_BASE_URL: 'https://crm.example.com/' });
    const setup = await estimateSetup();
    const link = await shareLink(setup.company.key, 'estimates', setup.estimate.uuid, other);
    expect(link.url.startsWith('https://crm.example.com/share/estimates/')).toBe(true);
    expect((await getRaw(app, pathOf(link.url))).statusCode).toBe(200);
  });

  it('refuse tampered tokens with 404', async () => {
    const setup = await estimateSetup();
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const [subject, expires, signature] = link.split('/').at(-1)!.split('.') as [string, string, string];
    const flip = (value: string, at: number) => value.slice(0, at) + (value[at] === 'A' ? 'B' : 'A') + value.slice(at + 1);
    const tampered = [
      `${flip(subject, 5)}.${expires}.${signature}`,
      `${subject}.${Number(expires) + 1000}.${signature}`,
      `${subject}.${expires}.${flip(signature, 10)}`,
      // The last character's unused low bits: every other letter in its group of four decodes to the same bytes.
      ...[1, 2, 3].map((step) => {
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
        const last = alphabet.indexOf(signature.at(-1)!);
        return `${subject}.${expires}.${signature.slice(0, -1)}${alphabet[(last & ~3) | ((last + step) & 3)]}`;
      }),
      `${subject}.0${expires}.${signature}`,
      `${subject}.${expires}`,
      'garbage',
    ];
    for (const token of tampered) {
      const page = await getRaw(app, `/share/estimates/${token}`);
      expect(page.statusCode, token).toBe(404);
      expect(page.headers['content-type']).toContain('text/html');
      const pdf = await call(app, 'GET', `/share/estimates/${token}/pdf`);
      expect(pdf.status).toBe(404);
      expect(pdf.body.error.code).toBe('not_found');
      const accepted = await accept(`/share/estimates/${token}`, { selected_tier: 'good', signature_name: 'X' });
      expect(accepted.status).toBe(404);
    }
    // Signed with another secret: 404 too.
    const other = await appWith({ PHOTO_URL_SECRET: 'another-secret' });
    expect((await getRaw(other, link)).statusCode).toBe(404);
    expect((await getRaw(app, link)).statusCode).toBe(200);
  });

  it('expire after SHARE_LINK_TTL_SECONDS', async () => {
    const shortLived = await appWith({ SHARE_LINK_TTL_SECONDS: '1' });
    const setup = await estimateSetup();
    const link = await shareLink(setup.company.key, 'estimates', setup.estimate.uuid, shortLived);
    expect(Date.parse(link.expires_at) - Date.now()).toBeLessThanOrEqual(1000);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(link.expires_at) - Date.now()) + 50));
    expect((await getRaw(app, pathOf(link.url))).statusCode).toBe(404);
    expect((await getRaw(app, `${pathOf(link.url)}/pdf`)).statusCode).toBe(404);
    const accepted = await accept(pathOf(link.url), { selected_tier: 'good', signature_name: 'Dana' });
    expect(accepted.status).toBe(404);
    expect((await readEstimate(setup.company.key, setup.estimate.uuid)).status).toBe('Pending');
  });

  it('of a deleted record answer 404, and none is made for it', async () => {
    const setup = await estimateSetup();
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    expect((await api(setup.company.key, 'DELETE', `/estimates/${setup.estimate.uuid}`)).status).toBe(200);
    expect((await getRaw(app, link)).statusCode).toBe(404);
    expect((await getRaw(app, `${link}/pdf`)).statusCode).toBe(404);
    expect((await accept(link, { selected_tier: 'good', signature_name: 'Dana' })).status).toBe(404);
    expect((await decline(link, {})).status).toBe(404);
    const again = await api(setup.company.key, 'POST', `/estimates/${setup.estimate.uuid}/share_link`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('not_found');
  });
});

describe('accept and decline', () => {
  it('accept by JSON re-prices with the chosen tier and add-ons, stores the answer and answers the customer view', async () => {
    const setup = await estimateSetup();
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const response = await accept(link, {
      selected_tier: 'best',
      selected_addons: ['permit', 'haul'],
      signature_name: 'Dana Reyes',
      response_notes: 'Please call before arriving.',
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    // best 2,250.50 + add-ons 124.99 = 2,375.49; tax 8.25 % = 195.977... -> 195.98; total 2,571.47
    expect(response.body.data).toMatchObject({
      estimate_number: setup.estimate.estimate_number,
      status: 'Accepted',
      selected_tier: 'best',
      selected_addons: ['permit', 'haul'],
      base_amount: 2250.5,
      addons_amount: 124.99,
      tax_amount: 195.98,
      total_amount: 2571.47,
      signature_name: 'Dana Reyes',
      response_notes: 'Please call before arriving.',
      pdf_url: `http://localhost:80${link}/pdf`,
    });
    expect(response.body.data.internal_notes).toBeUndefined();
    const stored = await readEstimate(setup.company.key, setup.estimate.uuid);
    expect(stored).toMatchObject({
      status: 'Accepted',
      selected_tier: 'best',
      selected_addons: ['permit', 'haul'],
      base_amount: 2250.5,
      addons_amount: 124.99,
      tax_amount: 195.98,
      total_amount: 2571.47,
      response_notes: 'Please call before arriving.',
    });
    expect(Date.now() - Date.parse(stored.responded_at)).toBeLessThan(60_000);
    expect(stored.signature_name).toBeUndefined();
    const [row] = await ctx.database.db.select().from(estimates).where(eq(estimates.uuid, setup.estimate.uuid));
    expect(row!.signatureName).toBe('Dana Reyes');
    expect(row!.signedAt).toBeInstanceOf(Date);

    const page = await getRaw(app, link);
    expect(page.body).toContain('You accepted this estimate');
    expect(page.body).toContain('signed by Dana Reyes');
    expect(page.body).not.toContain('<form');
    const pdf = await pdfText((await getRaw(app, `${link}/pdf`)).rawPayload);
    expect(pdf).toContain('Accepted by Dana Reyes');
    expect(pdf).toMatch(/Total\s+2,571\.47/);

    const second = await accept(link, { selected_tier: 'good', signature_name: 'Dana Reyes' });
    expect(second.status).toBe(400);
    expect(second.body.error.code).toBe('invalid_status_transition');
    const late = await decline(link, {});
    expect(late.status).toBe(400);
    expect(late.body.error.code).toBe('invalid_status_transition');
    expect((await readEstimate(setup.company.key, setup.estimate.uuid)).total_amount).toBe(2571.47);
  });

  it('accept without add-ons drops the ones the estimate had; a flat template needs no tier', async () => {
    const setup = await estimateSetup({ selected_addons: ['permit'] });
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const response = await accept(link, { selected_tier: 'good', signature_name: 'Dana' });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ selected_addons: [], addons_amount: 0, base_amount: 1000, tax_amount: 82.5, total_amount: 1082.5 });
    // null means none too, as on the estimate's own PUT.
    const withNull = await estimateSetup({ selected_addons: ['permit'] });
    const nullLink = pathOf((await shareLink(withNull.company.key, 'estimates', withNull.estimate.uuid)).url);
    const nullAccept = await accept(nullLink, { selected_tier: 'good', signature_name: 'Dana', selected_addons: null });
    expect(nullAccept.status, JSON.stringify(nullAccept.body)).toBe(200);
    expect(nullAccept.body.data).toMatchObject({ selected_addons: [], addons_amount: 0, total_amount: 1082.5 });

    const flat = await makeTemplate(app, setup.company.key, { name: 'Drain cleaning', pricing_type: 'flat', base_price: 149.99, tax_rate: 6.25 });
    const estimate = await makeEstimate(app, setup.company.key, { customer_uuid: setup.customer.uuid, template_uuid: flat.uuid, quantity: 3 });
    const flatLink = pathOf((await shareLink(setup.company.key, 'estimates', estimate.uuid)).url);
    const flatAccept = await accept(flatLink, { signature_name: 'Dana' });
    expect(flatAccept.status, JSON.stringify(flatAccept.body)).toBe(200);
    // 149.99 x 3 = 449.97; tax 6.25 % = 28.123 -> 28.12; total 478.09
    expect(flatAccept.body.data).toMatchObject({ status: 'Accepted', base_amount: 449.97, tax_amount: 28.12, total_amount: 478.09 });
  });

  it('decline by JSON stores the reason', async () => {
    const setup = await estimateSetup();
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const response = await decline(link, { response_notes: 'Too expensive' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ status: 'Declined', response_notes: 'Too expensive', total_amount: 1082.5 });
    const stored = await readEstimate(setup.company.key, setup.estimate.uuid);
    expect(stored).toMatchObject({ status: 'Declined', response_notes: 'Too expensive' });
    expect(stored.responded_at).not.toBeNull();
    const page = await getRaw(app, link);
    expect(page.body).toContain('You declined this estimate');
    expect(page.body).not.toContain('<form');
    expect((await accept(link, { selected_tier: 'good', signature_name: 'Dana' })).body.error.code).toBe('invalid_status_transition');
  });

  it('validates JSON answers in the envelope and changes nothing', async () => {
    const setup = await estimateSetup();
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const cases: Array<[unknown, string]> = [
      [{ selected_tier: 'better' }, 'signature_name'],
      [{ selected_tier: 'better', signature_name: '   ' }, 'signature_name'],
      [{ signature_name: 'Dana' }, 'selected_tier'],
      [{ selected_tier: 'platinum', signature_name: 'Dana' }, 'selected_tier'],
      [{ selected_tier: 'good', selected_addons: ['permit', 'gold-plating'], signature_name: 'Dana' }, 'selected_addons[1]'],
      [{ selected_tier: 'good', signature_name: 'Dana', status: 'Accepted' }, 'status'],
      [{ selected_tier: 'good', signature_name: 'Dana', total_amount: 1 }, 'total_amount'],
    ];
    for (const [body, field] of cases) {
      const response = await accept(link, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(response.body.error.details.map((detail: { field: string }) => detail.field), JSON.stringify(response.body)).toContain(field);
    }
    const malformed = await call(app, 'POST', `${link}/accept`, { rawBody: '{"selected_tier":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('validation_error');
    const badDecline = await decline(link, { response_notes: 5 });
    expect(badDecline.status).toBe(400);
    expect(badDecline.body.error.code).toBe('validation_error');
    const stored = await readEstimate(setup.company.key, setup.estimate.uuid);
    expect(stored).toMatchObject({ status: 'Pending', selected_tier: 'good', total_amount: 1082.5, responded_at: null });
  });

  it('refuses a repeated add-on exactly as the API does (400 naming selected_addons), by JSON and by form', async () => {
    const setup = await estimateSetup();
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const repeated = ['permit', 'permit', 'permit'];
    const byApi = await api(setup.company.key, 'PUT', `/estimates/${setup.estimate.uuid}`, { selected_addons: repeated });
    const byJson = await accept(link, { selected_tier: 'good', selected_addons: repeated, signature_name: 'Dana' });
    for (const response of [byApi, byJson]) {
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(response.body.error.details.map((detail: { field: string }) => detail.field)).toEqual(['selected_addons']);
    }
    expect(byJson.body.error.details).toEqual(byApi.body.error.details);
    const byForm = await postForm(`${link}/accept`, 'selected_tier=good&selected_addons=permit&selected_addons=permit&signature_name=Dana');
    expect(byForm.statusCode).toBe(400);
    expect(byForm.headers['content-type']).toMatch(/^text\/html/);
    expect(byForm.body).toContain('selected_addons');
    // Nothing was charged or answered.
    const stored = await readEstimate(setup.company.key, setup.estimate.uuid);
    expect(stored).toMatchObject({ status: 'Pending', selected_addons: setup.estimate.selected_addons, total_amount: setup.estimate.total_amount });
  });

  it('accept by form answers 303 back to the page, which then shows the outcome; a second is 400 with the outcome', async () => {
    const setup = await estimateSetup();
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const response = await postForm(
      `${link}/accept`,
      'selected_tier=better&selected_addons=permit&selected_addons=haul&signature_name=Dana+Reyes&response_notes=',
    );
    expect(response.statusCode, response.body).toBe(303);
    expect(response.headers.location).toBe(link);
    // 1,500 + 124.99 = 1,624.99; tax 134.06 (134.061...); total 1,759.05
    const stored = await readEstimate(setup.company.key, setup.estimate.uuid);
    expect(stored).toMatchObject({ status: 'Accepted', selected_tier: 'better', selected_addons: ['permit', 'haul'], total_amount: 1759.05, tax_amount: 134.06 });
    expect(stored.response_notes).toBeNull();
    const page = await getRaw(app, link);
    expect(page.body).toContain('You accepted this estimate');
    expect(page.body).toContain('$1,759.05');
    // A second form post is 400 invalid_status_transition, as for JSON: the page again, with the outcome
    // and the error and no forms; nothing changes.
    const again = await postForm(`${link}/accept`, 'selected_tier=good&signature_name=Someone');
    expect(again.statusCode).toBe(400);
    expect(again.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(again.body).toContain('You accepted this estimate');
    expect(again.body).toContain('role="alert"');
    expect(again.body).not.toContain('signature_name');
    const declineToo = await postForm(`${link}/decline`, 'response_notes=Changed+my+mind');
    expect(declineToo.statusCode).toBe(400);
    expect(declineToo.body).toContain('You accepted this estimate');
    expect(await readEstimate(setup.company.key, setup.estimate.uuid)).toMatchObject({ status: 'Accepted', total_amount: 1759.05, response_notes: null });
  });

  it('a single checked add-on and a form decline work too', async () => {
    const setup = await estimateSetup();
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const declined = await postForm(`${link}/decline`, 'response_notes=Not+now');
    expect(declined.statusCode).toBe(303);
    expect(declined.headers.location).toBe(link);
    expect(await readEstimate(setup.company.key, setup.estimate.uuid)).toMatchObject({ status: 'Declined', response_notes: 'Not now' });

    const other = await estimateSetup();
    const otherLink = pathOf((await shareLink(other.company.key, 'estimates', other.estimate.uuid)).url);
    const accepted = await postForm(`${otherLink}/accept`, 'selected_tier=good&selected_addons=haul&signature_name=Pat');
    expect(accepted.statusCode).toBe(303);
    expect(await readEstimate(other.company.key, other.estimate.uuid)).toMatchObject({ selected_addons: ['haul'], addons_amount: 49.99 });
  });

  it('shows form errors on the page again (400) with what was entered, and changes nothing', async () => {
    const setup = await estimateSetup();
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const missingName = await postForm(`${link}/accept`, 'selected_tier=best&selected_addons=haul&signature_name=&response_notes=Soon');
    expect(missingName.statusCode).toBe(400);
    expect(missingName.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(missingName.headers['content-security-policy']).toContain("form-action 'self'");
    expect(missingName.body).toContain('role="alert"');
    expect(missingName.body).toContain('signature_name');
    expect(missingName.body).toMatch(/value="best" required checked/);
    expect(missingName.body).toMatch(/value="haul" checked/);
    expect(missingName.body).toContain('>Soon</textarea>');
    const missingTier = await postForm(`${link}/accept`, 'signature_name=Dana');
    expect(missingTier.statusCode).toBe(400);
    expect(missingTier.body).toContain('selected_tier');
    const unknownAddon = await postForm(`${link}/accept`, 'selected_tier=good&selected_addons=%3Cscript%3E&signature_name=Dana');
    expect(unknownAddon.statusCode).toBe(400);
    expect(unknownAddon.body).not.toContain('<script>');
    expect(unknownAddon.body).toContain('&#60;script&#62;');
    expect(await readEstimate(setup.company.key, setup.estimate.uuid)).toMatchObject({ status: 'Pending', total_amount: 1082.5 });
  });

  it('two simultaneous accepts: one Accepted, the others 400 invalid_status_transition', async () => {
    const setup = await estimateSetup();
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const tiers = ['good', 'better', 'best', 'good', 'better'];
    const responses = await Promise.all(tiers.map((tier, index) => accept(link, { selected_tier: tier, signature_name: `Signer ${index}` })));
    const winners = responses.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    for (const response of responses.filter((candidate) => candidate.status !== 200)) {
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_status_transition');
    }
    const stored = await readEstimate(setup.company.key, setup.estimate.uuid);
    expect(stored.status).toBe('Accepted');
    expect(stored.selected_tier).toBe(winners[0]!.body.data.selected_tier);
    expect(stored.total_amount).toBe(winners[0]!.body.data.total_amount);
    const [row] = await ctx.database.db.select().from(estimates).where(eq(estimates.uuid, setup.estimate.uuid));
    expect(row!.signatureName).toBe(winners[0]!.body.data.signature_name);
  });

  it('an estimate that is no longer Pending shows its outcome and refuses answers', async () => {
    const setup = await estimateSetup();
    expect((await api(setup.company.key, 'PUT', `/estimates/${setup.estimate.uuid}`, { status: 'Expired' })).status).toBe(200);
    const link = pathOf((await shareLink(setup.company.key, 'estimates', setup.estimate.uuid)).url);
    const page = await getRaw(app, link);
    expect(page.body).toContain('This estimate has expired');
    expect(page.body).not.toContain('<form');
    const response = await accept(link, { selected_tier: 'good', signature_name: 'Dana' });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_status_transition');
  });
});

describe('POST .../send', () => {
  it('emails an estimate: text and HTML with the link, the PDF attached, Reply-To the company; the job moves to Estimate Sent', async () => {
    const setup = await estimateSetup();
    const before = sink.messages.length;
    const response = await api(setup.company.key, 'POST', `/estimates/${setup.estimate.uuid}/send`, {
      cc: ['office@example.com'],
      message: 'Thanks for having us out today.',
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ to: 'dana@example.com', cc: ['office@example.com'] });
    expect(response.body.data.message_id).toMatch(/^<.+@.+>$/);
    expect(Date.now() - Date.parse(response.body.data.sent_at)).toBeLessThan(60_000);
    expect(sink.messages.length).toBe(before + 1);
    const mail = sink.messages.at(-1)!;
    expect(mail.messageId).toBe(response.body.data.message_id);
    expect(mail.subject).toContain(setup.estimate.estimate_number);
    expect(mail.to && 'text' in mail.to ? mail.to.text : '').toContain('dana@example.com');
    expect(mail.cc && 'text' in mail.cc ? mail.cc.text : '').toContain('office@example.com');
    const [company] = await ctx.database.db.select().from(companies).where(eq(companies.uuid, setup.company.companyId));
    expect(mail.replyTo?.value[0]?.address).toBe(company!.email);
    expect(mail.from?.value[0]?.name).toBe(company!.name);
    expect(mail.text).toContain('Thanks for having us out today.');
    expect(mail.text).toContain('$1,082.50');
    const link = shareUrlIn(mail.text!);
    expect(mail.html).toContain(link);
    expect(mail.attachments).toHaveLength(1);
    const attachment = mail.attachments[0]!;
    expect(attachment.contentType).toBe('application/pdf');
    expect(attachment.filename).toBe(`Estimate-${setup.estimate.estimate_number}.pdf`);
    expect(await pdfText(attachment.content)).toMatch(/Total\s+1,082\.50/);

    const page = await getRaw(app, pathOf(link));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`Estimate ${setup.estimate.estimate_number}`);
    expect(await jobStatus(setup.company.companyId, setup.jobUuid)).toBe('Estimate Sent');
    // The move is a change like any other: the job records job.updated.
    const jobEvents = await waitForEvent(setup.company.key, setup.jobUuid, 'job.updated');
    expect(jobEvents.at(-1)?.data.object.status).toBe('Estimate Sent');
  });

  it('leaves a job that is past scheduling where it is, and sends to `to` when given', async () => {
    const setup = await estimateSetup({}, 'In Progress');
    const response = await api(setup.company.key, 'POST', `/estimates/${setup.estimate.uuid}/send`, { to: 'someone@example.org' });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ to: 'someone@example.org', cc: [] });
    expect(await jobStatus(setup.company.companyId, setup.jobUuid)).toBe('In Progress');
    const scheduled = await estimateSetup({}, 'Scheduled');
    expect((await api(scheduled.company.key, 'POST', `/estimates/${scheduled.estimate.uuid}/send`)).status).toBe(200);
    expect(await jobStatus(scheduled.company.companyId, scheduled.jobUuid)).toBe('Estimate Sent');
  });

  it('emails an invoice and moves it from Draft to Pending', async () => {
    const setup = await invoiceSetup();
    const invoice = await makeInvoice(app, setup, { status: 'Draft', line_items: [{ description: 'Repipe', unit_price: 1000, tax_rate: 8.25 }] });
    expect(invoice.status).toBe('Draft');
    const response = await api(setup.company.key, 'POST', `/invoices/${invoice.uuid}/send`, {});
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ to: 'morgan@example.com', cc: [] });
    const mail = sink.messages.find((message) => message.messageId === response.body.data.message_id)!;
    expect(mail.subject).toContain(invoice.invoice_number);
    expect(mail.text).toContain('Balance due: $1,082.50');
    expect(await pdfText(mail.attachments[0]!.content)).toContain(invoice.invoice_number);
    expect((await getRaw(app, pathOf(shareUrlIn(mail.text!)))).statusCode).toBe(200);
    const after = await api(setup.company.key, 'GET', `/invoices/${invoice.uuid}`);
    expect(after.body.data.status).toBe('Pending');
    const invoiceEvents = await waitForEvent(setup.company.key, invoice.uuid, 'invoice.updated');
    expect(invoiceEvents.at(-1)?.data.previous_attributes).toMatchObject({ status: 'Draft' });
    // Sending a Pending invoice again leaves it Pending.
    expect((await api(setup.company.key, 'POST', `/invoices/${invoice.uuid}/send`)).status).toBe(200);
    expect((await api(setup.company.key, 'GET', `/invoices/${invoice.uuid}`)).body.data.status).toBe('Pending');
  });

  it('is 400 without a recipient and for bad addresses or fields', async () => {
    const setup = await invoiceSetup();
    const customer = await makeCustomer(app, setup.company.key);
    // A customer without an email, billed for a job of theirs (one customer per document).
    const jobUuid = (await insertJob(ctx.database, setup.company.companyId, customer.uuid)).uuid;
    const invoice = await makeInvoice(app, { ...setup, customer, jobUuid }, { line_items: [{ description: 'Visit', unit_price: 50 }] });
    const before = sink.messages.length;
    const cases: Array<[unknown, string]> = [
      [{}, 'to'],
      [{ to: 'not-an-email' }, 'to'],
      [{ to: 'a@example.com', cc: ['nope'] }, 'cc[0]'],
      [{ to: 'a@example.com', bcc: ['x@example.com'] }, 'bcc'],
    ];
    for (const [body, field] of cases) {
      const response = await api(setup.company.key, 'POST', `/invoices/${invoice.uuid}/send`, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.code).toBe('validation_error');
      expect(response.body.error.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
    expect(sink.messages.length).toBe(before);
  });

  it('answers 503 and changes nothing when SMTP is unset, unreachable or refuses', async () => {
    const unset = await appWith({});
    const down = await appWith({ SMTP_URL: 'smtp://127.0.0.1:9' });
    const setup = await estimateSetup();
    const invoiceCtx = await invoiceSetup();
    const invoice = await makeInvoice(app, invoiceCtx, { status: 'Draft', line_items: [{ description: 'Visit', unit_price: 50 }] });
    const attempts = async (target: FastifyInstance) => {
      for (const path of [`/estimates/${setup.estimate.uuid}/send`, `/invoices/${invoice.uuid}/send`]) {
        const key = path.startsWith('/estimates') ? setup.company.key : invoiceCtx.company.key;
        const response = await call(target, 'POST', `/api/v1${path}`, { key, body: {} });
        expect(response.status, JSON.stringify(response.body)).toBe(503);
        expect(response.body.error.code).toBe('service_unavailable');
      }
    };
    await attempts(unset);
    await attempts(down);
    sink.refuse = true;
    try {
      await attempts(app);
    } finally {
      sink.refuse = false;
    }
    expect(await jobStatus(setup.company.companyId, setup.jobUuid)).toBe('New');
    const [row] = await ctx.database.db.select().from(invoices).where(eq(invoices.uuid, invoice.uuid));
    expect(row!.status).toBe('Draft');
  });
});

describe('tenant isolation of the document routes', () => {
  it("answers 404 for another company's invoice and estimate on every route", async () => {
    const setup = await estimateSetup();
    const invoiceCtx = await invoiceSetup();
    const invoice = await makeInvoice(app, invoiceCtx, { line_items: [{ description: 'Visit', unit_price: 50 }] });
    const stranger = await makeCompany(ctx.database);
    const before = sink.messages.length;
    for (const [method, path] of [
      ['GET', `/estimates/${setup.estimate.uuid}/pdf`],
      ['POST', `/estimates/${setup.estimate.uuid}/share_link`],
      ['POST', `/estimates/${setup.estimate.uuid}/send`],
      ['GET', `/invoices/${invoice.uuid}/pdf`],
      ['POST', `/invoices/${invoice.uuid}/share_link`],
      ['POST', `/invoices/${invoice.uuid}/send`],
    ] as const) {
      const response = await api(stranger.key, method, path, path.endsWith('/send') ? { to: 'x@example.com' } : undefined);
      expect(response.status, path).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    expect(sink.messages.length).toBe(before);
    expect(await jobStatus(setup.company.companyId, setup.jobUuid)).toBe('New');
  });

  it('a token names its company: a link made by one company never opens another company\'s record', async () => {
    const first = await estimateSetup();
    const second = await estimateSetup();
    const firstLink = pathOf((await shareLink(first.company.key, 'estimates', first.estimate.uuid)).url);
    const page = await getRaw(app, firstLink);
    expect(page.body).toContain(first.estimate.estimate_number);
    expect(page.body).toContain(`${first.customer.first_name} ${first.customer.last_name}`);
    expect(page.body).not.toContain(`${second.customer.first_name} ${second.customer.last_name}`);
  });
});

describe('OpenAPI', () => {
  it('documents the document routes and the public pages without security', async () => {
    const document = (await call(app, 'GET', '/openapi.json')).body;
    const pdf = document.paths['/api/v1/invoices/{uuid}/pdf'].get;
    expect(Object.keys(pdf.responses['200'].content)).toEqual(['application/pdf']);
    expect(document.paths['/api/v1/estimates/{uuid}/pdf'].get.responses['200'].content['application/pdf']).toBeDefined();
    for (const path of ['/api/v1/estimates/{uuid}/share_link', '/api/v1/invoices/{uuid}/share_link', '/api/v1/estimates/{uuid}/send', '/api/v1/invoices/{uuid}/send']) {
      expect(document.paths[path].post.security, path).toBeDefined();
    }
    const acceptOp = document.paths['/share/estimates/{token}/accept'].post;
    expect(acceptOp.security).toEqual([]);
    expect(Object.keys(acceptOp.requestBody.content).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    expect(acceptOp.responses['303'].headers.Location).toBeDefined();
    // A form gets its 400 and its 429 as a page; every keyless 429 says when to retry, per address.
    expect(Object.keys(acceptOp.responses['400'].content).sort()).toEqual(['application/json', 'text/html']);
    expect(Object.keys(acceptOp.responses['429'].content).sort()).toEqual(['application/json', 'text/html']);
    for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, { responses: Record<string, any> }>>)) {
      if (path.startsWith('/api/')) continue;
      for (const [method, operation] of Object.entries(methods)) {
        const limited = operation.responses['429'];
        if (!limited) continue;
        expect(limited.headers?.['Retry-After'], `${method} ${path}`).toBeDefined();
        expect(limited.description, `${method} ${path}`).toMatch(/client address/);
        const example = limited.content['application/json']?.examples?.rate_limited?.value.error.message;
        if (example) expect(example, `${method} ${path}`).toMatch(/from this address/);
      }
    }
    expect(document.paths['/share/estimates/{token}'].get.responses['200'].content['text/html']).toBeDefined();
    expect(document.paths['/share/invoices/{token}/pdf'].get.responses['200'].content['application/pdf']).toBeDefined();
  });
});

describe('the one link signer', () => {
  it('keeps photo links and share tokens of each kind apart, and checks expiry', () => {
    const signer = new UrlSigner('secret');
    const now = Date.parse('2026-11-22T12:00:00Z');
    const { token, expires } = signer.token('share:estimate', 'c3ViamVjdA', 60, now);
    expect(signer.verifyToken('share:estimate', token, now)).toEqual({ subject: 'c3ViamVjdA', expires });
    expect(signer.verifyToken('share:invoice', token, now)).toBeNull();
    expect(signer.verifyToken('share:estimate', token, (expires + 1) * 1000)).toBeNull();
    expect(new UrlSigner('other').verifyToken('share:estimate', token, now)).toBeNull();
    // A photo link's signature over the same text never passes as a token, nor the other way round.
    const photo = signer.link('c3ViamVjdA', 60, now);
    expect(signer.verifyToken('share:estimate', `c3ViamVjdA.${photo.expires}.${Buffer.from(photo.signature, 'hex').toString('base64url')}`, now)).toBeNull();
    const tokenSignature = Buffer.from(token.split('.')[2]!, 'base64url').toString('hex');
    expect(signer.verify('c3ViamVjdA', String(expires), tokenSignature, now)).toBe(false);
    expect(signer.verify('c3ViamVjdA', String(photo.expires), photo.signature, now)).toBe(true);
  });
});
