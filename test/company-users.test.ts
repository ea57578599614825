import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { companies, users } from '../src/db/schema/index.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeKey, makeUser } from './helpers/factories.js';
import { expectError } from './helpers/conventions.js';

const ctx = await buildTestApp();

describe('GET /api/v1/companies/me', () => {
  it('returns exactly the company fields of the key, nothing else', async () => {
    const company = await makeCompany(ctx.database, { name: 'Cool Air LLC', addons: ['photos'], monthlyRequestLimit: 1000 });
    await ctx.database.db
      .update(companies)
      .set({
        phone: '512-555-0100',
        addressLine1: '1 Main St',
        addressLine2: 'Floor 2',
        city: 'Austin',
        state: 'TX',
        postalCode: '78701',
        country: 'US',
      })
      .where(eq(companies.uuid, company.companyId));
    const [row] = await ctx.database.db.select().from(companies).where(eq(companies.uuid, company.companyId));

    const response = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key });
    expect(response.status).toBe(200);
    expect(response.body).toStrictEqual({
      success: true,
      data: {
        uuid: company.companyId,
        name: 'Cool Air LLC',
        email: row.email,
        phone: '512-555-0100',
        address_line_1: '1 Main St',
        address_line_2: 'Floor 2',
        city: 'Austin',
        state: 'TX',
        postal_code: '78701',
        country: 'US',
      },
    });
  });

  it('returns null for the unset optional fields and never the add-ons, limits or timestamps', async () => {
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 50 });
    const response = await call(ctx.app, 'GET', '/api/v1/companies/me', { key: company.key });
    expect(response.status).toBe(200);
    const data = response.body.data;
    expect(Object.keys(data).sort()).toEqual(
      ['address_line_1', 'address_line_2', 'city', 'country', 'email', 'name', 'phone', 'postal_code', 'state', 'uuid'],
    );
    expect(data).toMatchObject({ uuid: company.companyId, phone: null, address_line_1: null, address_line_2: null, city: null, state: null, postal_code: null, country: null });
    expect(data.email).toMatch(/@example\.com$/);
    const text = JSON.stringify(response.body);
    for (const secret of ['addons', 'monthly', 'limit', 'key', 'created_at', 'numbering', 'photos']) expect(text).not.toContain(secret);
  });

  it("answers with the key's own company for each of two companies", async () => {
    const a = await makeCompany(ctx.database, { name: 'Alpha' });
    const b = await makeCompany(ctx.database, { name: 'Beta' });
    const extraA = await makeKey(ctx.database, a.companyId);
    expect((await call(ctx.app, 'GET', '/api/v1/companies/me', { key: a.key })).body.data).toMatchObject({ uuid: a.companyId, name: 'Alpha' });
    expect((await call(ctx.app, 'GET', '/api/v1/companies/me', { key: extraA.api_key })).body.data).toMatchObject({ uuid: a.companyId, name: 'Alpha' });
    expect((await call(ctx.app, 'GET', '/api/v1/companies/me', { key: b.key })).body.data).toMatchObject({ uuid: b.companyId, name: 'Beta' });
  });

  it('refuses query parameters it does not know', async () => {
    const company = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'GET', '/api/v1/companies/me?include=addons', { key: company.key });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
  });
});

describe('GET /api/v1/users', () => {
  it("lists the company's users, newest first, as {id, first_name, last_name, email}", async () => {
    const company = await makeCompany(ctx.database);
    const tech = await makeUser(ctx.database, company.companyId, 'Sam', 'Tech');
    const other = await makeCompany(ctx.database);
    await makeUser(ctx.database, other.companyId, 'Not', 'Mine');

    const response = await call(ctx.app, 'GET', '/api/v1/users', { key: company.key });
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    expect(response.body.data.pagination).toEqual({ page: 1, limit: 50, total: 2, total_pages: 1 });
    const [first, second] = response.body.data.users;
    expect(first).toStrictEqual({ id: tech, first_name: 'Sam', last_name: 'Tech', email: expect.stringMatching(/@example\.com$/) });
    expect(second).toStrictEqual({ id: company.userId, first_name: 'Account', last_name: 'Owner', email: expect.stringMatching(/@example\.com$/) });
  });

  it('returns null for a user without email', async () => {
    const company = await makeCompany(ctx.database);
    await ctx.database.db.update(users).set({ email: null }).where(eq(users.uuid, company.userId));
    const response = await call(ctx.app, 'GET', '/api/v1/users', { key: company.key });
    expect(response.body.data.users).toStrictEqual([{ id: company.userId, first_name: 'Account', last_name: 'Owner', email: null }]);
  });

  it('pages with the list conventions', async () => {
    const company = await makeCompany(ctx.database);
    const made = [company.userId];
    for (let i = 0; i < 4; i++) made.push(await makeUser(ctx.database, company.companyId, `U${i}`, 'Tech'));
    const newestFirst = [...made].reverse();
    const ids: string[] = [];
    for (const page of [1, 2, 3]) {
      const response = await call(ctx.app, 'GET', `/api/v1/users?page=${page}&limit=2`, { key: company.key });
      expect(response.status).toBe(200);
      expect(response.body.data.pagination).toEqual({ page, limit: 2, total: 5, total_pages: 3 });
      ids.push(...response.body.data.users.map((user: { id: string }) => user.id));
    }
    expect(ids).toEqual(newestFirst);
    const past = await call(ctx.app, 'GET', '/api/v1/users?page=9&limit=2', { key: company.key });
    expect(past.body.data).toEqual({ users: [], pagination: { page: 9, limit: 2, total: 5, total_pages: 3 } });
  });

  it('hides soft-deleted users unless include_deleted=true', async () => {
    const company = await makeCompany(ctx.database);
    const gone = await makeUser(ctx.database, company.companyId, 'Gone', 'User');
    await ctx.database.db.update(users).set({ deletedAt: new Date() }).where(eq(users.uuid, gone));
    const live = await call(ctx.app, 'GET', '/api/v1/users', { key: company.key });
    expect(live.body.data.users.map((user: { id: string }) => user.id)).toEqual([company.userId]);
    expect(live.body.data.pagination.total).toBe(1);
    const all = await call(ctx.app, 'GET', '/api/v1/users?include_deleted=true', { key: company.key });
    expect(all.body.data.users.map((user: { id: string }) => user.id)).toEqual([gone, company.userId]);
    expect(all.body.data.pagination.total).toBe(2);
  });

  it('refuses bad list parameters', async () => {
    const company = await makeCompany(ctx.database);
    expectError(await call(ctx.app, 'GET', '/api/v1/users?limit=101', { key: company.key }), 400, 'validation_error', 'limit');
    expectError(await call(ctx.app, 'GET', '/api/v1/users?page=0', { key: company.key }), 400, 'validation_error', 'page');
    expectError(await call(ctx.app, 'GET', '/api/v1/users?role=admin', { key: company.key }), 400, 'validation_error', 'role');
  });

  it('needs a key', async () => {
    expectError(await call(ctx.app, 'GET', '/api/v1/users'), 401, 'unauthorized');
  });
});
