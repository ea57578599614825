import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { flatTemplate, makeTemplate, tieredTemplate } from './helpers/estimates-factories.js';
import { makeCompany } from './helpers/factories.js';
import { expectSoftDeleted } from './helpers/conventions.js';

const ctx = await buildTestApp();

const post = (key: string, body: unknown) => call(ctx.app, 'POST', '/api/v1/templates', { key, body });
const put = (key: string, uuid: string, body: unknown) => call(ctx.app, 'PUT', `/api/v1/templates/${uuid}`, { key, body });
const fieldsOf = (body: any) => body.error.details.map((detail: { field: string }) => detail.field);

describe('POST /templates', () => {
  it('creates a flat template with defaults and money as numbers', async () => {
    const company = await makeCompany(ctx.database);
    const response = await post(company.key, flatTemplate({ base_price: 129.99 }));
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    expect(response.body.data).toMatchObject({
      name: 'AC tune-up',
      description: null,
      pricing_type: 'flat',
      base_price: 129.99,
      tiers: null,
      addons: [],
      tax_rate: 0,
      is_active: true,
      deleted_at: null,
    });
    expect(response.body.data.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body.data).not.toHaveProperty('company_id');
  });

  it('creates a tiered template with add-ons and a fractional tax rate', async () => {
    const company = await makeCompany(ctx.database);
    const response = await post(company.key, tieredTemplate({ tax_rate: 8.875 }));
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      pricing_type: 'tiered',
      base_price: null,
      tiers: { good: 1000, better: 1500, best: 2250.5 },
      addons: [
        { id: 'permit', name: 'City permit', price: 75 },
        { id: 'haul', name: 'Haul away old unit', price: 49.99 },
      ],
      tax_rate: 8.875,
    });
  });

  it('requires base_price for a flat template', async () => {
    const company = await makeCompany(ctx.database);
    const response = await post(company.key, { name: 'No price', pricing_type: 'flat' });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    expect(fieldsOf(response.body)).toEqual(['base_price']);
  });

  it('requires tiers for a tiered template, all three of them', async () => {
    const company = await makeCompany(ctx.database);
    const missing = await post(company.key, { name: 'T', pricing_type: 'tiered' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('validation_error');
    expect(fieldsOf(missing.body)).toEqual(['tiers']);

    const partial = await post(company.key, { name: 'T', pricing_type: 'tiered', tiers: { good: 1, better: 2 } });
    expect(partial.status).toBe(400);
    expect(partial.body.error.code).toBe('validation_error');
    expect(fieldsOf(partial.body)).toEqual(['tiers.best']);
  });

  it('refuses duplicate add-on ids', async () => {
    const company = await makeCompany(ctx.database);
    const response = await post(
      company.key,
      flatTemplate({ addons: [{ id: 'a', name: 'One', price: 1 }, { id: 'a', name: 'Two', price: 2 }] }),
    );
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    expect(fieldsOf(response.body)).toEqual(['addons[1].id']);
  });

  it.each([
    ['an unknown pricing_type', { pricing_type: 'hourly' }, 'pricing_type'],
    ['a negative price', { base_price: -1 }, 'base_price'],
    ['a price with 3 decimals', { base_price: 1.005 }, 'base_price'],
    ['a tax rate above 100', { tax_rate: 100.5 }, 'tax_rate'],
    ['a tax rate with 5 decimals', { tax_rate: 8.12345 }, 'tax_rate'],
    ['a negative tax rate', { tax_rate: -1 }, 'tax_rate'],
    ['an unknown field', { color: 'red' }, 'color'],
    ['a read-only field', { uuid: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70' }, 'uuid'],
    ['an add-on without a price', { addons: [{ id: 'x', name: 'X' }] }, 'addons[0].price'],
  ])('refuses %s', async (_label, override, field) => {
    const company = await makeCompany(ctx.database);
    const response = await post(company.key, flatTemplate(override));
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    expect(fieldsOf(response.body)).toContain(field);
  });

  it('requires a name', async () => {
    const company = await makeCompany(ctx.database);
    const response = await post(company.key, { pricing_type: 'flat', base_price: 1 });
    expect(response.status).toBe(400);
    expect(fieldsOf(response.body)).toEqual(['name']);
  });
});

describe('PUT/PATCH /templates/{uuid}', () => {
  it('changes the given fields and keeps the rest', async () => {
    const company = await makeCompany(ctx.database);
    const template = await makeTemplate(ctx.app, company.key, tieredTemplate({ tax_rate: 8.25 }));
    const response = await call(ctx.app, 'PATCH', `/api/v1/templates/${template.uuid}`, {
      key: company.key,
      body: { name: 'Renamed', is_active: false },
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      name: 'Renamed',
      is_active: false,
      tiers: template.tiers,
      addons: template.addons,
      tax_rate: 8.25,
    });
  });

  it('checks the pricing rules against the merged record', async () => {
    const company = await makeCompany(ctx.database);
    const flat = await makeTemplate(ctx.app, company.key, flatTemplate());

    const toTieredWithoutTiers = await put(company.key, flat.uuid, { pricing_type: 'tiered' });
    expect(toTieredWithoutTiers.status).toBe(400);
    expect(toTieredWithoutTiers.body.error.code).toBe('validation_error');
    expect(fieldsOf(toTieredWithoutTiers.body)).toEqual(['tiers']);

    const clearBasePrice = await put(company.key, flat.uuid, { base_price: null });
    expect(clearBasePrice.status).toBe(400);
    expect(fieldsOf(clearBasePrice.body)).toEqual(['base_price']);

    const toTiered = await put(company.key, flat.uuid, { pricing_type: 'tiered', tiers: { good: 1, better: 2, best: 3 } });
    expect(toTiered.status).toBe(200);
    expect(toTiered.body.data).toMatchObject({ pricing_type: 'tiered', tiers: { good: 1, better: 2, best: 3 } });

    const unchanged = await call(ctx.app, 'GET', `/api/v1/templates/${flat.uuid}`, { key: company.key });
    expect(unchanged.status).toBe(200);
    expect(unchanged.body.data.pricing_type).toBe('tiered');
  });

  it('refuses duplicate add-on ids on update', async () => {
    const company = await makeCompany(ctx.database);
    const template = await makeTemplate(ctx.app, company.key);
    const response = await put(company.key, template.uuid, {
      addons: [{ id: 'x', name: 'X', price: 1 }, { id: 'x', name: 'Y', price: 2 }],
    });
    expect(response.status).toBe(400);
    expect(fieldsOf(response.body)).toEqual(['addons[1].id']);
  });

  it('is 404 for a missing template', async () => {
    const company = await makeCompany(ctx.database);
    const response = await put(company.key, '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70', { name: 'x' });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  });
});

describe('GET /templates', () => {
  it('lists newest first with filters and pagination', async () => {
    const company = await makeCompany(ctx.database);
    const flat = await makeTemplate(ctx.app, company.key, flatTemplate({ name: 'First' }));
    const tiered = await makeTemplate(ctx.app, company.key, tieredTemplate({ name: 'Second', is_active: false }));

    const all = await call(ctx.app, 'GET', '/api/v1/templates', { key: company.key });
    expect(all.status).toBe(200);
    expect(all.body.data.templates.map((t: { uuid: string }) => t.uuid)).toEqual([tiered.uuid, flat.uuid]);
    expect(all.body.data.pagination).toEqual({ page: 1, limit: 50, total: 2, total_pages: 1 });

    const flats = await call(ctx.app, 'GET', '/api/v1/templates?pricing_type=flat', { key: company.key });
    expect(flats.status).toBe(200);
    expect(flats.body.data.templates.map((t: { uuid: string }) => t.uuid)).toEqual([flat.uuid]);

    const inactive = await call(ctx.app, 'GET', '/api/v1/templates?is_active=false', { key: company.key });
    expect(inactive.status).toBe(200);
    expect(inactive.body.data.templates.map((t: { uuid: string }) => t.uuid)).toEqual([tiered.uuid]);

    const page2 = await call(ctx.app, 'GET', '/api/v1/templates?limit=1&page=2', { key: company.key });
    expect(page2.status).toBe(200);
    expect(page2.body.data.templates.map((t: { uuid: string }) => t.uuid)).toEqual([flat.uuid]);
    expect(page2.body.data.pagination).toEqual({ page: 2, limit: 1, total: 2, total_pages: 2 });
  });

  it('refuses unknown query parameters', async () => {
    const company = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'GET', '/api/v1/templates?color=red', { key: company.key });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
  });
});

describe('DELETE /templates/{uuid}', () => {
  it('soft-deletes: hidden from list and get unless include_deleted', async () => {
    const company = await makeCompany(ctx.database);
    const template = await makeTemplate(ctx.app, company.key);
    const deleted = await call(ctx.app, 'DELETE', `/api/v1/templates/${template.uuid}`, { key: company.key });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.message).toBe('Template deleted successfully');

    await expectSoftDeleted(ctx.app, company.key, `/api/v1/templates/${template.uuid}`, { name: 'x' });

    const list = await call(ctx.app, 'GET', '/api/v1/templates', { key: company.key });
    expect(list.body.data.pagination.total).toBe(0);
    const listDeleted = await call(ctx.app, 'GET', '/api/v1/templates?include_deleted=true', { key: company.key });
    expect(listDeleted.body.data.templates.map((t: { uuid: string }) => t.uuid)).toEqual([template.uuid]);
  });
});

describe('template tenancy', () => {
  it("never shows or changes another company's template", async () => {
    const a = await makeCompany(ctx.database);
    const b = await makeCompany(ctx.database);
    const template = await makeTemplate(ctx.app, a.key);

    for (const [method, body] of [['GET', undefined], ['PUT', { name: 'x' }], ['PATCH', { name: 'x' }], ['DELETE', undefined]] as const) {
      const response = await call(ctx.app, method, `/api/v1/templates/${template.uuid}`, { key: b.key, body });
      expect(response.status, method).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const list = await call(ctx.app, 'GET', '/api/v1/templates?include_deleted=true', { key: b.key });
    expect(list.status).toBe(200);
    expect(list.body.data.templates).toEqual([]);
    expect(list.body.data.pagination.total).toBe(0);

    const own = await call(ctx.app, 'GET', `/api/v1/templates/${template.uuid}`, { key: a.key });
    expect(own.status).toBe(200);
    expect(own.body.data.name).toBe('AC tune-up');
  });
});
