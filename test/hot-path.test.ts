import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UuidParams } from '../src/shared/crud-routes.js';
import { GetQuery } from '../src/shared/list-query.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeCustomer } from './helpers/factories.js';

/**
 * The budget of the most frequent request, a GET of one record (bench/README.md, "hot path"): one SQL
 * statement, and nothing per request that can be done once: no logger made while nothing is logged, no
 * schema run for a well-formed id or an empty query string.
 */
const ctx = await buildTestApp({ env: { WEBHOOK_WORKER_ENABLED: 'false' } });

/** Statements the background work sends on its own timers, whatever the requests do. */
const BACKGROUND = /usage_counters|webhook_deliveries|last_used_at|idempotency_keys|from "?events"? where .*created_at </;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the hot path of a GET', () => {
  it.skipIf(!ctx.databaseUrl)('sends one statement for a customer GET and one round trip of statements for a list page', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, company.key);
    // The first request loads the key and the usage count; later ones find both in memory.
    expect((await call(ctx.app, 'GET', `/api/v1/customers/${customer.uuid}`, { key: company.key })).status).toBe(200);

    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as string | { text?: string };
      const text = typeof config === 'string' ? config : (config?.text ?? '');
      if (!BACKGROUND.test(text)) sent.push(text);
      return (query as (...values: unknown[]) => unknown).apply(this, args) as never;
    });
    const got = await call(ctx.app, 'GET', `/api/v1/customers/${customer.uuid}`, { key: company.key });
    expect(got.status).toBe(200);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^select .* from "customers"/);

    sent.length = 0;
    // A short page proves its own total: the page is the only statement.
    const page = await call(ctx.app, 'GET', '/api/v1/customers', { key: company.key });
    expect(page.status).toBe(200);
    expect(sent).toHaveLength(1);
  });

  it('makes no logger, runs no schema for the id and the empty query, while nothing is logged', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, company.key);
    expect((await call(ctx.app, 'GET', `/api/v1/customers/${customer.uuid}`, { key: company.key })).status).toBe(200);

    const child = vi.spyOn(ctx.app.log, 'child');
    const params = vi.spyOn(UuidParams, 'safeParse');
    const query = vi.spyOn(GetQuery, 'safeParse');
    const got = await call(ctx.app, 'GET', `/api/v1/customers/${customer.uuid.toUpperCase()}`, { key: company.key });
    expect(got.status).toBe(200);
    expect(got.body.data.uuid).toBe(customer.uuid);
    expect(child).not.toHaveBeenCalled();
    expect(params).not.toHaveBeenCalled();
    expect(query).not.toHaveBeenCalled();

    // What the schemas decide is still theirs: a malformed id and a query parameter are parsed and refused or read.
    const malformed = await call(ctx.app, 'GET', '/api/v1/customers/not-a-uuid', { key: company.key });
    expect(malformed.status).toBe(400);
    expect(params).toHaveBeenCalled();
    const deleted = await call(ctx.app, 'GET', `/api/v1/customers/${customer.uuid}?include_deleted=true`, { key: company.key });
    expect(deleted.status).toBe(200);
    expect(query).toHaveBeenCalled();
  });
});
