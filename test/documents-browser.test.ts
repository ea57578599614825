import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from './helpers/app.js';
import { CHROMIUM, runsWith } from './helpers/system.js';
import { insertJob, makeEstimate, makeTemplate, tieredTemplate } from './helpers/estimates-factories.js';
import { createVia, makeCompany, makeCustomer } from './helpers/factories.js';

/**
 * The customer page in a real browser (Debian's chromium, driven by puppeteer-core, which downloads
 * nothing). CI (CI=true) always runs these; a machine without chromium skips them.
 */
const runs = runsWith('Chromium', Boolean(CHROMIUM), 'apt-get install chromium');

const ctx = await buildTestApp();
const shots = mkdtempSync(path.join(tmpdir(), 'crm-shots-'));

describe.runIf(runs)('the customer page in Chromium', () => {
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    const address = ctx.app.server.address() as { port: number };
    base = `http://127.0.0.1:${address.port}`;
    browser = await puppeteer.launch({
      executablePath: CHROMIUM ?? '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  /** A Pending tiered estimate (8.25 % tax) with a long company name and a share link made over HTTP. */
  async function sharedEstimate() {
    const company = await makeCompany(ctx.database, { name: 'Reyes Plumbing, Heating & Drain Cleaning of Greater Austin' });
    const customer = await makeCustomer(ctx.app, company.key, {
      first_name: 'Dana',
      last_name: 'Reyes-Montgomery',
      email: 'dana@example.com',
      physical_address1: '12345 Extraordinarily Long Boulevard Name',
      physical_city: 'Austin',
      physical_state: 'TX',
      physical_zip: '78702',
    });
    const template = await makeTemplate(ctx.app, company.key, tieredTemplate({ tax_rate: 8.25 }));
    const job = await insertJob(ctx.database, company.companyId, customer.uuid);
    const estimate = await makeEstimate(ctx.app, company.key, {
      customer_uuid: customer.uuid,
      template_uuid: template.uuid,
      job_uuid: job.uuid,
      selected_tier: 'good',
      service_description: 'Remove the failed 40-gallon tank and install a new high-efficiency unit with new supply lines.',
    });
    const response = await fetch(`${base}/api/v1/estimates/${estimate.uuid}/share_link`, {
      method: 'POST',
      headers: { authorization: `Bearer ${company.key}` },
    });
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: { url: string } };
    expect(data.url.startsWith(`${base}/share/estimates/`)).toBe(true);
    return { company, estimate, url: data.url };
  }

  for (const width of [375, 1280]) {
    it(`renders at ${width} px without horizontal scrolling`, async () => {
      const { url, estimate } = await sharedEstimate();
      const page = await browser.newPage();
      try {
        await page.setViewport({ width, height: 900 });
        const response = await page.goto(url, { waitUntil: 'load' });
        expect(response?.status()).toBe(200);
        // A string, evaluated in the page: the project's type check has no DOM library.
        const measured = (await page.evaluate(`({
          scrollWidth: document.documentElement.scrollWidth,
          title: document.title,
          styled: getComputedStyle(document.querySelector('button')).backgroundColor,
          inputs: [...document.querySelectorAll('input, textarea')].map((element) => ({
            id: element.id,
            name: element.getAttribute('name'),
            labelled: (element.id && Boolean(document.querySelector('label[for="' + element.id + '"]'))) || Boolean(element.closest('label')),
          })),
        })`)) as { scrollWidth: number; title: string; styled: string; inputs: Array<{ id: string; name: string; labelled: boolean }> };
        expect(measured.scrollWidth).toBeLessThanOrEqual(width);
        expect(measured.title).toContain(estimate.estimate_number);
        // The inline style applied (the CSP admits it by nonce): the accept button is the brand blue.
        expect(measured.styled).toBe('rgb(11, 83, 148)');
        expect(measured.inputs.length).toBeGreaterThanOrEqual(8);
        for (const input of measured.inputs) expect(input.labelled, JSON.stringify(input)).toBe(true);
        const file = path.join(shots, `estimate-${width}.png`);
        await page.screenshot({ path: file as `${string}.png`, fullPage: true });
        const png = statSync(file);
        expect(png.size).toBeGreaterThan(5_000);
      } finally {
        await page.close();
      }
    }, 60_000);
  }

  it('renders an invoice page at 375 px without horizontal scrolling', async () => {
    const company = await makeCompany(ctx.database, { name: 'Reyes Plumbing, Heating & Drain Cleaning of Greater Austin' });
    const customer = await makeCustomer(ctx.app, company.key, { email: 'dana@example.com' });
    const job = await insertJob(ctx.database, company.companyId, customer.uuid);
    const invoice = await createVia(ctx.app, company.key, '/invoices', {
      job_uuid: job.uuid,
      customer_uuid: customer.uuid,
      due_date: '2099-12-31',
      line_items: [
        { description: 'Hydro-jetting of the main sewer line from the cleanout to the street connection', quantity: 1, unit_price: 1249.99, tax_rate: 8.25 },
        { description: 'Camera inspection', quantity: 2.5, unit_price: 120, tax_rate: 8.25 },
      ],
      terms: 'Net 30',
    });
    const response = await fetch(`${base}/api/v1/invoices/${invoice.uuid}/share_link`, { method: 'POST', headers: { authorization: `Bearer ${company.key}` } });
    const { data } = (await response.json()) as { data: { url: string } };
    const page = await browser.newPage();
    try {
      await page.setViewport({ width: 375, height: 900 });
      expect((await page.goto(data.url, { waitUntil: 'load' }))?.status()).toBe(200);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      const text = await page.$eval('main', (main) => main.textContent ?? '');
      // 1,249.99 + 300.00 = 1,549.99; tax 103.12 + 24.75 = 127.87; total 1,677.86
      expect(text).toContain('$1,677.86');
      await page.screenshot({ path: path.join(shots, 'invoice-375.png') as `${string}.png`, fullPage: true });
    } finally {
      await page.close();
    }
  }, 60_000);

  it('accepts an estimate end to end through the plain form (no JavaScript), keyboard only', async () => {
    const { url, estimate, company } = await sharedEstimate();
    const page = await browser.newPage();
    try {
      await page.setJavaScriptEnabled(false);
      await page.setViewport({ width: 375, height: 900 });
      await page.goto(url, { waitUntil: 'load' });
      await page.click('input[name="selected_tier"][value="best"]');
      await page.click('input[name="selected_addons"][value="permit"]');
      await page.type('#signature_name', 'Dana Reyes-Montgomery');
      await page.type('#accept_notes', 'Mornings are best.');
      // Submit from the keyboard: Enter in the signature field submits the accept form.
      await page.focus('#signature_name');
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.keyboard.press('Enter')]);
      expect(page.url()).toBe(url);
      const text = await page.$eval('main', (main) => main.textContent ?? '');
      expect(text).toContain('You accepted this estimate');
      expect(text).toContain('signed by Dana Reyes-Montgomery');
      // best 2,250.50 + permit 75.00 = 2,325.50; tax 8.25 % = 191.85 (191.854); total 2,517.35
      expect(text).toContain('$2,517.35');
      expect(await page.$('form')).toBeNull();
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      await page.screenshot({ path: path.join(shots, 'estimate-accepted-375.png') as `${string}.png`, fullPage: true });
    } finally {
      await page.close();
    }
    const response = await fetch(`${base}/api/v1/estimates/${estimate.uuid}`, { headers: { authorization: `Bearer ${company.key}` } });
    const { data } = (await response.json()) as { data: Record<string, unknown> };
    expect(data).toMatchObject({
      status: 'Accepted',
      selected_tier: 'best',
      selected_addons: ['permit'],
      base_amount: 2250.5,
      addons_amount: 75,
      tax_amount: 191.85,
      total_amount: 2517.35,
      response_notes: 'Mornings are best.',
    });
  }, 60_000);
});
