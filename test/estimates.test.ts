import { count, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { estimates } from '../src/db/schema/index.js';
import { buildTestApp, call } from './helpers/app.js';
import { flatTemplate, insertJob, makeEstimate, makeTemplate, tieredTemplate } from './helpers/estimates-factories.js';
import { makeCompany, makeCustomer, makeLocation, type TestCompany } from './helpers/factories.js';
import { expectSoftDeleted, expectValidationError } from './helpers/conventions.js';

const ctx = await buildTestApp();

const MISSING_UUID = '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70';

const post = (key: string, path: string, body: unknown) => call(ctx.app, 'POST', `/api/v1${path}`, { key, body });
const put = (key: string, uuid: string, body: unknown) => call(ctx.app, 'PUT', `/api/v1/estimates/${uuid}`, { key, body });
const get = (key: string, path: string) => call(ctx.app, 'GET', `/api/v1${path}`, { key });
const uuidsOf = (list: Array<{ uuid: string }>) => list.map((item) => item.uuid);

/** A company with a customer and one template; every test starts from its own. */
async function companyWith(template: Record<string, unknown> = flatTemplate()) {
  const company = await makeCompany(ctx.database);
  const customer = await makeCustomer(ctx.app, company.key);
  const created = await makeTemplate(ctx.app, company.key, template);
  return { company, customer, template: created };
}

const estimateFor = (setup: { customer: { uuid: string }; template: { uuid: string } }, extra: Record<string, unknown> = {}) => ({
  customer_uuid: setup.customer.uuid,
  template_uuid: setup.template.uuid,
  ...extra,
});

async function countEstimates(company: TestCompany) {
  const [row] = await ctx.database.db.select({ total: count() }).from(estimates).where(eq(estimates.companyId, company.companyId));
  return Number(row.total);
}

describe('estimate arithmetic (create and preview agree)', () => {
  /** Creates the estimate and previews the same input; both must give `expected`. */
  async function priced(template: Record<string, unknown>, input: Record<string, unknown>) {
    const setup = await companyWith(template);
    const preview = await post(setup.company.key, '/estimates/preview', { template_uuid: setup.template.uuid, ...input });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    const estimate = await makeEstimate(ctx.app, setup.company.key, estimateFor(setup, input));
    const amounts = {
      base_amount: estimate.base_amount,
      addons_amount: estimate.addons_amount,
      tax_amount: estimate.tax_amount,
      total_amount: estimate.total_amount,
    };
    expect(preview.body.data.preview).toEqual(amounts);
    return { amounts, preview: preview.body.data, estimate };
  }

  it('rounds quantity x price half away from zero: 1.5 x 33.33 = 50.00', async () => {
    const { amounts, estimate } = await priced(flatTemplate({ base_price: 33.33 }), { quantity: 1.5 });
    expect(amounts).toEqual({ base_amount: 50, addons_amount: 0, tax_amount: 0, total_amount: 50 });
    expect(estimate.quantity).toBe(1.5);
  });

  it('uses a 3-decimal quantity exactly', async () => {
    const { amounts } = await priced(flatTemplate({ base_price: 19.99 }), { quantity: 2.125 });
    // 19.99 x 2.125 = 42.47875
    expect(amounts).toEqual({ base_amount: 42.48, addons_amount: 0, tax_amount: 0, total_amount: 42.48 });
  });

  it('prices the selected tier and does not multiply add-ons by quantity', async () => {
    const { amounts, preview } = await priced(tieredTemplate({ tax_rate: 8.25 }), {
      selected_tier: 'better',
      quantity: 2,
      selected_addons: ['permit', 'haul'],
    });
    // base 1500 x 2 = 3000; add-ons 75 + 49.99 = 124.99; tax 3124.99 x 8.25% = 257.811675 -> 257.81
    expect(amounts).toEqual({ base_amount: 3000, addons_amount: 124.99, tax_amount: 257.81, total_amount: 3382.8 });
    expect(preview.breakdown).toEqual({
      base_amount: 3000,
      unit_price: 1500,
      quantity: 2,
      tax_rate: 8.25,
      addons: [
        { id: 'permit', name: 'City permit', price: 75 },
        { id: 'haul', name: 'Haul away old unit', price: 49.99 },
      ],
      adjustments: {},
    });
  });

  it.each([
    ['good', 1000],
    ['best', 2250.5],
  ])('prices the %s tier', async (tier, price) => {
    const { amounts } = await priced(tieredTemplate(), { selected_tier: tier });
    expect(amounts).toEqual({ base_amount: price, addons_amount: 0, tax_amount: 0, total_amount: price });
  });

  it('rounds tax half away from zero: 8.25% of 10.00 = 0.83', async () => {
    const { amounts } = await priced(flatTemplate({ base_price: 10, tax_rate: 8.25 }), {});
    expect(amounts).toEqual({ base_amount: 10, addons_amount: 0, tax_amount: 0.83, total_amount: 10.83 });
  });

  it('applies a 4-decimal tax rate: 8.875% of 119.99 = 10.65', async () => {
    const { amounts } = await priced(flatTemplate({ base_price: 119.99, tax_rate: 8.875 }), {});
    // 119.99 x 8.875% = 10.6491125 -> 10.65
    expect(amounts).toEqual({ base_amount: 119.99, addons_amount: 0, tax_amount: 10.65, total_amount: 130.64 });
  });

  describe('adjustments', () => {
    const template = tieredTemplate({ tax_rate: 10 });
    const input = { selected_tier: 'good', selected_addons: ['permit'] };

    it('without adjustments: 1000 + 75 + 10% tax', async () => {
      const { amounts } = await priced(template, input);
      expect(amounts).toEqual({ base_amount: 1000, addons_amount: 75, tax_amount: 107.5, total_amount: 1182.5 });
    });

    it('base_amount replaces the base and the tax uses it', async () => {
      const { amounts, preview } = await priced(template, { ...input, adjustments: { base_amount: 900 } });
      expect(amounts).toEqual({ base_amount: 900, addons_amount: 75, tax_amount: 97.5, total_amount: 1072.5 });
      expect(preview.breakdown.base_amount).toBe(1000);
      expect(preview.breakdown.adjustments).toEqual({ base_amount: 900 });
    });

    it('addons_amount replaces the add-ons total and the tax uses it', async () => {
      const { amounts, estimate } = await priced(template, { ...input, adjustments: { addons_amount: 20.05 } });
      // tax (1000 + 20.05) x 10% = 102.005 -> 102.01
      expect(amounts).toEqual({ base_amount: 1000, addons_amount: 20.05, tax_amount: 102.01, total_amount: 1122.06 });
      expect(estimate.adjustments).toEqual({ addons_amount: 20.05 });
    });

    it('tax_amount replaces the computed tax', async () => {
      const { amounts, preview } = await priced(template, { ...input, adjustments: { tax_amount: 0 } });
      expect(amounts).toEqual({ base_amount: 1000, addons_amount: 75, tax_amount: 0, total_amount: 1075 });
      expect(preview.breakdown.adjustments).toEqual({ tax_amount: 0 });
    });

    it('all three at once', async () => {
      const { amounts } = await priced(template, {
        ...input,
        adjustments: { base_amount: 10, addons_amount: 5, tax_amount: 1.23 },
      });
      expect(amounts).toEqual({ base_amount: 10, addons_amount: 5, tax_amount: 1.23, total_amount: 16.23 });
    });
  });

  describe('refused inputs (create and preview alike)', () => {
    async function expectRefused(template: Record<string, unknown>, input: Record<string, unknown>, field: string) {
      const setup = await companyWith(template);
      expectValidationError(await post(setup.company.key, '/estimates/preview', { template_uuid: setup.template.uuid, ...input }), field);
      expectValidationError(await post(setup.company.key, '/estimates', estimateFor(setup, input)), field);
      expect(await countEstimates(setup.company)).toBe(0);
    }

    it('a tiered template without selected_tier', () => expectRefused(tieredTemplate(), {}, 'selected_tier'));
    it('a flat template with selected_tier', () => expectRefused(flatTemplate(), { selected_tier: 'good' }, 'selected_tier'));
    it('an unknown tier', () => expectRefused(tieredTemplate(), { selected_tier: 'premium' }, 'selected_tier'));
    it('an unknown add-on id', () =>
      expectRefused(tieredTemplate(), { selected_tier: 'good', selected_addons: ['permit', 'gold'] }, 'selected_addons[1]'));
    it('a repeated add-on id', () =>
      expectRefused(tieredTemplate(), { selected_tier: 'good', selected_addons: ['permit', 'permit'] }, 'selected_addons'));
    it('an unknown adjustment key', () => expectRefused(flatTemplate(), { adjustments: { discount: 5 } }, 'adjustments.discount'));
    it('a negative adjustment', () => expectRefused(flatTemplate(), { adjustments: { base_amount: -5 } }, 'adjustments.base_amount'));
    it('a quantity of 0', () => expectRefused(flatTemplate(), { quantity: 0 }, 'quantity'));
    it('a quantity with 4 decimals', () => expectRefused(flatTemplate(), { quantity: 1.0005 }, 'quantity'));
    it('an amount beyond numeric(12,2)', () =>
      expectRefused(flatTemplate({ base_price: 9_999_999_999 }), { quantity: 1000 }, 'quantity'));
    it('a total beyond numeric(12,2) from in-range amounts, named total_amount (no adjustments were sent)', () =>
      expectRefused(flatTemplate({ base_price: 9_999_999_999.99, tax_rate: 100 }), {}, 'total_amount'));
  });
});

describe('POST /estimates/preview', () => {
  it('writes nothing: no estimate and no number taken', async () => {
    const setup = await companyWith(tieredTemplate());
    const numberingBefore = await get(setup.company.key, '/numbering');
    const before = await countEstimates(setup.company);

    const preview = await post(setup.company.key, '/estimates/preview', {
      template_uuid: setup.template.uuid,
      selected_tier: 'best',
      adjustments: { tax_amount: 12 },
    });
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({
      success: true,
      data: {
        preview: { base_amount: 2250.5, addons_amount: 0, tax_amount: 12, total_amount: 2262.5 },
        breakdown: { base_amount: 2250.5, unit_price: 2250.5, quantity: 1, tax_rate: 0, addons: [], adjustments: { tax_amount: 12 } },
      },
    });

    expect(await countEstimates(setup.company)).toBe(before);
    const list = await get(setup.company.key, '/estimates');
    expect(list.body.data.pagination.total).toBe(0);
    const numberingAfter = await get(setup.company.key, '/numbering');
    expect(numberingAfter.body).toEqual(numberingBefore.body);
  });

  it('takes the create body as it is: the same input, the same numbers', async () => {
    const setup = await companyWith(tieredTemplate());
    const body = estimateFor(setup, {
      selected_tier: 'better',
      quantity: 3,
      service_description: 'Replace the water heater',
      customer_notes: 'Shut-off valve is in the garage',
      internal_notes: 'Bring the long ladder',
    });
    const preview = await post(setup.company.key, '/estimates/preview', body);
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    const created = await post(setup.company.key, '/estimates', body);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { base_amount, addons_amount, tax_amount, total_amount } = created.body.data;
    expect(preview.body.data.preview).toEqual({ base_amount, addons_amount, tax_amount, total_amount });
    expectValidationError(await post(setup.company.key, '/estimates/preview', { ...body, customer_uuid: 'nope' }), 'customer_uuid');
    expectValidationError(await post(setup.company.key, '/estimates/preview', { ...body, colour: 'red' }), 'colour');
  });

  it('checks every id it names as create does: another company\'s, or none, is 400, and the job is the customer\'s', async () => {
    const setup = await companyWith();
    const other = await companyWith();
    const key = setup.company.key;
    const template_uuid = setup.template.uuid;
    const foreignJob = await insertJob(ctx.database, other.company.companyId, other.customer.uuid);
    const foreignLocation = await makeLocation(ctx.app, other.company.key);
    expectValidationError(await post(key, '/estimates/preview', { template_uuid, customer_uuid: other.customer.uuid }), 'customer_uuid');
    expectValidationError(await post(key, '/estimates/preview', { template_uuid, customer_uuid: MISSING_UUID }), 'customer_uuid');
    expectValidationError(await post(key, '/estimates/preview', { template_uuid, job_uuid: foreignJob.uuid }), 'job_uuid');
    expectValidationError(await post(key, '/estimates/preview', { template_uuid, location_uuid: foreignLocation.uuid }), 'location_uuid');
    const neighbour = await makeCustomer(ctx.app, key);
    const job = await insertJob(ctx.database, setup.company.companyId, setup.customer.uuid);
    expectValidationError(await post(key, '/estimates/preview', { template_uuid, customer_uuid: neighbour.uuid, job_uuid: job.uuid }), 'customer_uuid');
    const location = await makeLocation(ctx.app, key);
    const named = await post(key, '/estimates/preview', { template_uuid, customer_uuid: setup.customer.uuid, job_uuid: job.uuid, location_uuid: location.uuid });
    expect(named.status, named.raw.body).toBe(200);
    // Without a customer, the job alone is checked for being the company's.
    expect((await post(key, '/estimates/preview', { template_uuid, job_uuid: job.uuid })).status).toBe(200);
  });

  it('needs a live template of the company', async () => {
    const setup = await companyWith();
    const other = await companyWith();
    expectValidationError(await post(setup.company.key, '/estimates/preview', {}), 'template_uuid');
    expectValidationError(await post(setup.company.key, '/estimates/preview', { template_uuid: MISSING_UUID }), 'template_uuid');
    expectValidationError(await post(setup.company.key, '/estimates/preview', { template_uuid: other.template.uuid }), 'template_uuid');

    await call(ctx.app, 'DELETE', `/api/v1/templates/${setup.template.uuid}`, { key: setup.company.key });
    expectValidationError(await post(setup.company.key, '/estimates/preview', { template_uuid: setup.template.uuid }), 'template_uuid');
  });

  it('refuses fields that are not the create body\'s, and malformed ones of the create body', async () => {
    const setup = await companyWith();
    expectValidationError(await post(setup.company.key, '/estimates/preview', { template_uuid: setup.template.uuid, estimate_number: 'EST-9' }), 'estimate_number');
    expectValidationError(await post(setup.company.key, '/estimates/preview', { template_uuid: setup.template.uuid, expires_at: 'soon' }), 'expires_at');
  });
});

describe('POST /estimates', () => {
  it('creates a Pending estimate with a number, copied template fields and embeds', async () => {
    const setup = await companyWith(tieredTemplate({ name: 'Water heater install' }));
    const location = await makeLocation(ctx.app, setup.company.key, { name: 'North shop' });
    const job = await insertJob(ctx.database, setup.company.companyId, setup.customer.uuid, 'Install heater');
    const estimate = await makeEstimate(
      ctx.app,
      setup.company.key,
      estimateFor(setup, {
        job_uuid: job.uuid,
        location_uuid: location.uuid,
        selected_tier: 'good',
        selected_addons: ['haul'],
        service_description: 'Replace 50 gal heater',
        internal_notes: 'Bring the dolly',
        customer_notes: 'Valid 30 days',
        expires_at: '2026-12-31T17:00:00-06:00',
      }),
    );
    expect(estimate).toMatchObject({
      estimate_number: 'EST-0001',
      customer_uuid: setup.customer.uuid,
      job_uuid: job.uuid,
      template_uuid: setup.template.uuid,
      location_uuid: location.uuid,
      created_by_user_id: setup.company.userId,
      status: 'Pending',
      template_name: 'Water heater install',
      pricing_type: 'tiered',
      selected_tier: 'good',
      quantity: 1,
      selected_addons: ['haul'],
      adjustments: null,
      base_amount: 1000,
      addons_amount: 49.99,
      tax_amount: 0,
      total_amount: 1049.99,
      service_description: 'Replace 50 gal heater',
      internal_notes: 'Bring the dolly',
      customer_notes: 'Valid 30 days',
      response_notes: null,
      expires_at: '2026-12-31T23:00:00.000Z',
      responded_at: null,
      deleted_at: null,
      customer: { uuid: setup.customer.uuid, first_name: setup.customer.first_name, last_name: setup.customer.last_name },
      job: { uuid: job.uuid, title: 'Install heater', status: 'New' },
      template: { uuid: setup.template.uuid, name: 'Water heater install', pricing_type: 'tiered' },
      location: { uuid: location.uuid, name: 'North shop' },
    });
    expect(estimate).not.toHaveProperty('estimate_seq');

    const read = await get(setup.company.key, `/estimates/${estimate.uuid}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(estimate);
  });

  it('keeps a timestamp of the years 1 to 99 as written, and refuses the year 0', async () => {
    const setup = await companyWith();
    for (const [given, kept] of [
      ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00.000Z'],
      ['0001-01-01T00:00:00+01:00', '0000-12-31T23:00:00.000Z'],
    ]) {
      const created = await post(setup.company.key, '/estimates', estimateFor(setup, { expires_at: given }));
      if (kept.startsWith('0000')) {
        // One hour before the year 1 in UTC is the year 0, which PostgreSQL does not have.
        expectValidationError(created, 'expires_at');
        continue;
      }
      expect(created.status, created.raw.body).toBe(200);
      expect(created.body.data.expires_at).toBe(kept);
      expect((await get(setup.company.key, `/estimates/${created.body.data.uuid}`)).body.data.expires_at).toBe(kept);
      const listed = await get(setup.company.key, '/estimates');
      expect(listed.body.data.estimates.find((item: { uuid: string }) => item.uuid === created.body.data.uuid).expires_at).toBe(kept);
    }
  });

  it('has null job and location when none is given, and defaults quantity to 1', async () => {
    const setup = await companyWith();
    const estimate = await makeEstimate(ctx.app, setup.company.key, estimateFor(setup));
    expect(estimate).toMatchObject({ job_uuid: null, job: null, location_uuid: null, location: null, quantity: 1, selected_tier: null });
    expect(estimate.total_amount).toBe(100);
  });

  it('numbers estimates consecutively per company', async () => {
    const a = await companyWith();
    const b = await companyWith();
    const first = await makeEstimate(ctx.app, a.company.key, estimateFor(a));
    const second = await makeEstimate(ctx.app, a.company.key, estimateFor(a));
    const otherCompany = await makeEstimate(ctx.app, b.company.key, estimateFor(b));
    expect([first.estimate_number, second.estimate_number, otherCompany.estimate_number]).toEqual(['EST-0001', 'EST-0002', 'EST-0001']);
  });

  it.each(['estimate_number', 'status', 'base_amount', 'total_amount', 'created_by_user_id', 'uuid', 'template_name'])(
    'refuses %s in the body',
    async (field) => {
      const setup = await companyWith();
      const value = field === 'base_amount' || field === 'total_amount' ? 1 : field === 'uuid' ? MISSING_UUID : 'EST-9999';
      expectValidationError(await post(setup.company.key, '/estimates', estimateFor(setup, { [field]: value })), field);
      expect(await countEstimates(setup.company)).toBe(0);
    },
  );

  it('requires customer_uuid and template_uuid', async () => {
    const setup = await companyWith();
    expectValidationError(await post(setup.company.key, '/estimates', { template_uuid: setup.template.uuid }), 'customer_uuid');
    expectValidationError(await post(setup.company.key, '/estimates', { customer_uuid: setup.customer.uuid }), 'template_uuid');
  });

  it("refuses another company's customer, template, job and location", async () => {
    const mine = await companyWith();
    const theirs = await companyWith();
    const theirJob = await insertJob(ctx.database, theirs.company.companyId, theirs.customer.uuid);
    const theirLocation = await makeLocation(ctx.app, theirs.company.key);
    const key = mine.company.key;

    expectValidationError(await post(key, '/estimates', estimateFor({ ...mine, customer: theirs.customer })), 'customer_uuid');
    expectValidationError(await post(key, '/estimates', estimateFor({ ...mine, template: theirs.template })), 'template_uuid');
    expectValidationError(await post(key, '/estimates', estimateFor(mine, { job_uuid: theirJob.uuid })), 'job_uuid');
    expectValidationError(await post(key, '/estimates', estimateFor(mine, { location_uuid: theirLocation.uuid })), 'location_uuid');
    expect(await countEstimates(mine.company)).toBe(0);
  });

  it('refuses soft-deleted references', async () => {
    const setup = await companyWith();
    const spareTemplate = await makeTemplate(ctx.app, setup.company.key);
    await call(ctx.app, 'DELETE', `/api/v1/customers/${setup.customer.uuid}`, { key: setup.company.key });
    await call(ctx.app, 'DELETE', `/api/v1/templates/${spareTemplate.uuid}`, { key: setup.company.key });
    expectValidationError(await post(setup.company.key, '/estimates', estimateFor(setup)), 'customer_uuid');
    const customer = await makeCustomer(ctx.app, setup.company.key);
    expectValidationError(
      await post(setup.company.key, '/estimates', { customer_uuid: customer.uuid, template_uuid: spareTemplate.uuid }),
      'template_uuid',
    );
  });

  it('a refused create takes no number', async () => {
    const setup = await companyWith(tieredTemplate());
    expectValidationError(await post(setup.company.key, '/estimates', estimateFor(setup)), 'selected_tier');
    const estimate = await makeEstimate(ctx.app, setup.company.key, estimateFor(setup, { selected_tier: 'good' }));
    expect(estimate.estimate_number).toBe('EST-0001');
  });

  it('keeps the copied template name when the template changes later', async () => {
    const setup = await companyWith(flatTemplate({ name: 'Old name' }));
    const estimate = await makeEstimate(ctx.app, setup.company.key, estimateFor(setup));
    await call(ctx.app, 'PATCH', `/api/v1/templates/${setup.template.uuid}`, { key: setup.company.key, body: { name: 'New name' } });
    const read = await get(setup.company.key, `/estimates/${estimate.uuid}`);
    expect(read.status).toBe(200);
    expect(read.body.data.template_name).toBe('Old name');
    expect(read.body.data.template).toEqual({ uuid: setup.template.uuid, name: 'New name', pricing_type: 'flat' });
  });
});

describe('PUT/PATCH /estimates/{uuid}', () => {
  async function pendingEstimate(template: Record<string, unknown> = flatTemplate()) {
    const setup = await companyWith(template);
    const estimate = await makeEstimate(ctx.app, setup.company.key, estimateFor(setup));
    return { ...setup, estimate };
  }

  it.each(['Accepted', 'Declined'])('Pending -> %s sets responded_at', async (status) => {
    const { company, estimate } = await pendingEstimate();
    const response = await put(company.key, estimate.uuid, { status, response_notes: 'Called back' });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ status, response_notes: 'Called back' });
    expect(Date.parse(response.body.data.responded_at)).toBeGreaterThanOrEqual(Date.parse(estimate.created_at));
  });

  it('Pending -> Expired leaves responded_at null', async () => {
    const { company, estimate } = await pendingEstimate();
    const response = await put(company.key, estimate.uuid, { status: 'Expired' });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ status: 'Expired', responded_at: null });
  });

  it.each([
    ['Accepted', 'Pending'],
    ['Accepted', 'Declined'],
    ['Accepted', 'Expired'],
    ['Declined', 'Pending'],
    ['Declined', 'Accepted'],
    ['Declined', 'Expired'],
    ['Expired', 'Pending'],
    ['Expired', 'Accepted'],
    ['Expired', 'Declined'],
  ])('refuses %s -> %s with invalid_status_transition', async (from, to) => {
    const { company, estimate } = await pendingEstimate();
    const moved = await put(company.key, estimate.uuid, { status: from });
    expect(moved.status).toBe(200);
    const refused = await put(company.key, estimate.uuid, { status: to, response_notes: 'ignored' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_status_transition');
    const read = await get(company.key, `/estimates/${estimate.uuid}`);
    expect(read.body.data).toMatchObject({ status: from, response_notes: null });
  });

  it('the same status is a no-op that keeps responded_at and applies the other fields', async () => {
    const { company, estimate } = await pendingEstimate();
    const samePending = await put(company.key, estimate.uuid, { status: 'Pending' });
    expect(samePending.status).toBe(200);
    expect(samePending.body.data).toMatchObject({ status: 'Pending', responded_at: null });

    const accepted = await put(company.key, estimate.uuid, { status: 'Accepted' });
    const again = await put(company.key, estimate.uuid, { status: 'Accepted', response_notes: 'Signed copy received' });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({
      status: 'Accepted',
      responded_at: accepted.body.data.responded_at,
      response_notes: 'Signed copy received',
    });
  });

  it('an unknown status is a validation_error', async () => {
    const { company, estimate } = await pendingEstimate();
    expectValidationError(await put(company.key, estimate.uuid, { status: 'Approved' }), 'status');
  });

  it.each(['customer_uuid', 'template_uuid', 'estimate_number', 'total_amount', 'responded_at'])(
    'refuses to change %s',
    async (field) => {
      const { company, estimate, customer } = await pendingEstimate();
      const value = field.endsWith('_uuid') ? customer.uuid : field === 'total_amount' ? 5 : 'x';
      expectValidationError(await put(company.key, estimate.uuid, { [field]: value }), field);
    },
  );

  it('recomputes the amounts from the merged pricing inputs', async () => {
    const setup = await companyWith(tieredTemplate({ tax_rate: 10 }));
    const estimate = await makeEstimate(ctx.app, setup.company.key, estimateFor(setup, { selected_tier: 'good', selected_addons: ['permit'] }));
    expect(estimate.total_amount).toBe(1182.5);

    const quantity = await put(setup.company.key, estimate.uuid, { quantity: 1.5 });
    expect(quantity.status).toBe(200);
    // 1500 + 75 = 1575, tax 157.50
    expect(quantity.body.data).toMatchObject({
      quantity: 1.5,
      selected_tier: 'good',
      selected_addons: ['permit'],
      base_amount: 1500,
      addons_amount: 75,
      tax_amount: 157.5,
      total_amount: 1732.5,
    });

    const tier = await put(setup.company.key, estimate.uuid, { selected_tier: 'best', selected_addons: null });
    // 2250.50 x 1.5 = 3375.75, tax 337.575 -> 337.58
    expect(tier.body.data).toMatchObject({ base_amount: 3375.75, addons_amount: 0, tax_amount: 337.58, total_amount: 3713.33 });

    const adjusted = await put(setup.company.key, estimate.uuid, { adjustments: { tax_amount: 0 } });
    expect(adjusted.body.data).toMatchObject({ adjustments: { tax_amount: 0 }, tax_amount: 0, total_amount: 3375.75 });

    const cleared = await put(setup.company.key, estimate.uuid, { adjustments: null });
    expect(cleared.body.data).toMatchObject({ adjustments: null, tax_amount: 337.58, total_amount: 3713.33 });

    expectValidationError(await put(setup.company.key, estimate.uuid, { selected_tier: null }), 'selected_tier');
    expectValidationError(await put(setup.company.key, estimate.uuid, { selected_addons: ['nope'] }), 'selected_addons[0]');
    const unchanged = await get(setup.company.key, `/estimates/${estimate.uuid}`);
    expect(unchanged.body.data.total_amount).toBe(3713.33);
  });

  it('keeps the amounts when no pricing field is sent, even if the template price changed', async () => {
    const { company, estimate, template } = await pendingEstimate(flatTemplate({ base_price: 100 }));
    await call(ctx.app, 'PATCH', `/api/v1/templates/${template.uuid}`, { key: company.key, body: { base_price: 200 } });
    const notes = await put(company.key, estimate.uuid, { status: 'Accepted', customer_notes: 'Thanks' });
    expect(notes.status).toBe(200);
    expect(notes.body.data).toMatchObject({ base_amount: 100, total_amount: 100, customer_notes: 'Thanks' });

    const repriced = await put(company.key, estimate.uuid, { quantity: 1 });
    expect(repriced.body.data).toMatchObject({ base_amount: 200, total_amount: 200 });
  });

  it('checks job_uuid and location_uuid and clears them with null', async () => {
    const { company, estimate, customer } = await pendingEstimate();
    const other = await companyWith();
    const job = await insertJob(ctx.database, company.companyId, customer.uuid, 'Diagnose');
    const otherJob = await insertJob(ctx.database, other.company.companyId, other.customer.uuid);
    const location = await makeLocation(ctx.app, company.key, { name: 'Depot' });
    const otherLocation = await makeLocation(ctx.app, other.company.key);

    expectValidationError(await put(company.key, estimate.uuid, { job_uuid: otherJob.uuid }), 'job_uuid');
    expectValidationError(await put(company.key, estimate.uuid, { location_uuid: otherLocation.uuid }), 'location_uuid');

    const linked = await put(company.key, estimate.uuid, { job_uuid: job.uuid, location_uuid: location.uuid });
    expect(linked.status).toBe(200);
    expect(linked.body.data).toMatchObject({
      job_uuid: job.uuid,
      job: { uuid: job.uuid, title: 'Diagnose', status: 'New' },
      location_uuid: location.uuid,
      location: { uuid: location.uuid, name: 'Depot' },
    });

    const cleared = await call(ctx.app, 'PATCH', `/api/v1/estimates/${estimate.uuid}`, {
      key: company.key,
      body: { job_uuid: null, location_uuid: null, expires_at: null, service_description: 'Updated' },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data).toMatchObject({ job_uuid: null, job: null, location_uuid: null, location: null, service_description: 'Updated' });
  });

  it('still reprices an estimate whose template was deleted afterwards', async () => {
    const { company, estimate, template } = await pendingEstimate(flatTemplate({ base_price: 40 }));
    await call(ctx.app, 'DELETE', `/api/v1/templates/${template.uuid}`, { key: company.key });
    const response = await put(company.key, estimate.uuid, { quantity: 3 });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ base_amount: 120, total_amount: 120 });
  });

  it('is 404 for a missing estimate', async () => {
    const company = await makeCompany(ctx.database);
    const response = await put(company.key, MISSING_UUID, { status: 'Accepted' });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });
});

describe('estimates of a template whose pricing type changed', () => {
  it('keep their amounts, and refuse to re-price with a clear 400', async () => {
    const setup = await companyWith(tieredTemplate());
    const created = await makeEstimate(ctx.app, setup.company.key, estimateFor(setup, { selected_tier: 'good' }));
    const switched = await call(ctx.app, 'PATCH', `/api/v1/templates/${setup.template.uuid}`, {
      key: setup.company.key,
      body: { pricing_type: 'flat', base_price: 80 },
    });
    expect(switched.status, JSON.stringify(switched.body)).toBe(200);
    expectValidationError(await put(setup.company.key, created.uuid, { quantity: 2 }), 'quantity');
    const notes = await put(setup.company.key, created.uuid, { customer_notes: 'still fine' });
    expect(notes.status).toBe(200);
    expect(notes.body.data).toMatchObject({ pricing_type: 'tiered', base_amount: created.base_amount, customer_notes: 'still fine' });
  });
});

describe('GET /estimates', () => {
  it('lists newest first with the embedded customer, filters and search', async () => {
    const setup = await companyWith(flatTemplate({ name: 'Duct cleaning' }));
    const key = setup.company.key;
    const otherCustomer = await makeCustomer(ctx.app, key, { first_name: 'Lee' });
    const job = await insertJob(ctx.database, setup.company.companyId, setup.customer.uuid);
    const first = await makeEstimate(ctx.app, key, estimateFor(setup, { service_description: 'Attic ducts' }));
    const second = await makeEstimate(ctx.app, key, estimateFor(setup, { job_uuid: job.uuid }));
    const third = await makeEstimate(ctx.app, key, { customer_uuid: otherCustomer.uuid, template_uuid: setup.template.uuid });
    await put(key, second.uuid, { status: 'Accepted' });

    const all = await get(key, '/estimates');
    expect(all.status).toBe(200);
    expect(uuidsOf(all.body.data.estimates)).toEqual([third.uuid, second.uuid, first.uuid]);
    expect(all.body.data.pagination).toEqual({ page: 1, limit: 50, total: 3, total_pages: 1 });
    expect(all.body.data.estimates[0].customer).toEqual({ uuid: otherCustomer.uuid, first_name: 'Lee', last_name: otherCustomer.last_name });
    expect(all.body.data.estimates[0]).not.toHaveProperty('template');

    const accepted = await get(key, '/estimates?status=Accepted');
    expect(uuidsOf(accepted.body.data.estimates)).toEqual([second.uuid]);
    const pending = await get(key, '/estimates?status=Pending');
    expect(uuidsOf(pending.body.data.estimates)).toEqual([third.uuid, first.uuid]);
    const byCustomer = await get(key, `/estimates?customer_uuid=${otherCustomer.uuid}`);
    expect(uuidsOf(byCustomer.body.data.estimates)).toEqual([third.uuid]);
    const byJob = await get(key, `/estimates?job_uuid=${job.uuid}`);
    expect(uuidsOf(byJob.body.data.estimates)).toEqual([second.uuid]);
    const combined = await get(key, `/estimates?customer_uuid=${setup.customer.uuid}&status=Pending`);
    expect(uuidsOf(combined.body.data.estimates)).toEqual([first.uuid]);

    const byNumber = await get(key, '/estimates?search=est-0002');
    expect(uuidsOf(byNumber.body.data.estimates)).toEqual([second.uuid]);
    const byTemplateName = await get(key, '/estimates?search=DUCT');
    expect(byTemplateName.body.data.pagination.total).toBe(3);
    const byDescription = await get(key, '/estimates?search=attic');
    expect(uuidsOf(byDescription.body.data.estimates)).toEqual([first.uuid]);
    const nothing = await get(key, '/estimates?search=zzz');
    expect(nothing.body.data).toEqual({ estimates: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 0 } });

    const page = await get(key, '/estimates?limit=2&page=2');
    expect(uuidsOf(page.body.data.estimates)).toEqual([first.uuid]);
    expect(page.body.data.pagination).toEqual({ page: 2, limit: 2, total: 3, total_pages: 2 });
  });

  it.each(['status=Approved', 'customer_uuid=nope', 'job_uuid=123', 'color=red'])('refuses the query %s', async (query) => {
    const company = await makeCompany(ctx.database);
    const response = await get(company.key, `/estimates?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
  });
});

describe('DELETE /estimates/{uuid}', () => {
  it('soft-deletes; the estimate shows only with include_deleted', async () => {
    const setup = await companyWith();
    const estimate = await makeEstimate(ctx.app, setup.company.key, estimateFor(setup));
    const key = setup.company.key;

    const deleted = await call(ctx.app, 'DELETE', `/api/v1/estimates/${estimate.uuid}`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { message: 'Estimate deleted successfully' } });

    const withDeleted = await expectSoftDeleted(ctx.app, key, `/api/v1/estimates/${estimate.uuid}`, { status: 'Accepted' });
    expect(withDeleted.body.data.status).toBe('Pending');

    const list = await get(key, '/estimates');
    expect(list.body.data.pagination.total).toBe(0);
    const listDeleted = await get(key, '/estimates?include_deleted=true');
    expect(uuidsOf(listDeleted.body.data.estimates)).toEqual([estimate.uuid]);
  });
});

describe('estimate tenancy', () => {
  it("another company gets 404 and never sees the estimate in lists or totals", async () => {
    const a = await companyWith();
    const b = await companyWith();
    const estimate = await makeEstimate(ctx.app, a.company.key, estimateFor(a));

    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { status: 'Accepted' }],
      ['PATCH', { internal_notes: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const response = await call(ctx.app, method, `/api/v1/estimates/${estimate.uuid}`, { key: b.company.key, body });
      expect(response.status, method).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const hidden = await get(b.company.key, `/estimates/${estimate.uuid}?include_deleted=true`);
    expect(hidden.status).toBe(404);

    for (const query of ['', '?include_deleted=true', `?customer_uuid=${a.customer.uuid}`, '?search=est-0001']) {
      const list = await get(b.company.key, `/estimates${query}`);
      expect(list.status).toBe(200);
      expect(list.body.data.estimates).toEqual([]);
      expect(list.body.data.pagination.total).toBe(0);
    }
    const own = await get(a.company.key, `/estimates/${estimate.uuid}`);
    expect(own.status).toBe(200);
    expect(own.body.data.status).toBe('Pending');
  });
});
