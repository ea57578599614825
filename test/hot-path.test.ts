import { afterEach, describe, expect, it, vi } from 'vitest';
import { UuidParams } from '../src/shared/crud-routes.js';
import { GetQuery } from '../src/shared/list-query.js';
import { buildTestApp, call } from './helpers/app.js';
import { recordStatements } from './helpers/statements.js';
import { makeCompany, makeCustomer } from './helpers/factories.js';
import { makeBillingSetup, makeInvoiceOf, paymentBody } from './helpers/billing-factories.js';

/**
 * The budget of the most frequent request, a GET of one record (bench/README.md, "hot path"): one SQL
 * statement, and nothing per request that can be done once: no logger made while nothing is logged, no
 * schema run for a well-formed id or an empty query string.
 */
const ctx = await buildTestApp({ env: { WEBHOOK_WORKER_ENABLED: 'false' } });

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the hot path of a GET', () => {
  it.skipIf(!ctx.databaseUrl)('sends one statement for a customer GET and one round trip of statements for a list page', async () => {
    const company = await makeCompany(ctx.database);
    const customer = await makeCustomer(ctx.app, company.key);
    // The first request loads the key and the usage count; later ones find both in memory.
    expect((await call(ctx.app, 'GET', `/api/v1/customers/${customer.uuid}`, { key: company.key })).status).toBe(200);

    const sent = recordStatements();
    const got = await call(ctx.app, 'GET', `/api/v1/customers/${customer.uuid}`, { key: company.key });
    expect(got.status).toBe(200);
    expect(sent, sent.join('\n')).toHaveLength(1);
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

describe('the round trips of a create that numbers its document (bench/README.md, I1 and P1)', () => {
  it.skipIf(!ctx.databaseUrl)('an invoice: its reads (customer and location, job), one statement and the flush; a payment that leaves it Pending: a read, one statement and the flush', async () => {
    const setup = await makeBillingSetup(ctx.app, ctx.database);
    const { key } = setup.company;
    const body = { job_uuid: setup.jobUuid, customer_uuid: setup.customer.uuid, due_date: '2099-12-31', line_items: [{ description: 'Service', unit_price: 100 }] };
    // The first request loads the key and the usage count.
    await makeInvoiceOf(ctx.app, setup, 10);

    const sent = recordStatements();
    const invoice = await call(ctx.app, 'POST', '/api/v1/invoices', { key, body });
    expect(invoice.status).toBe(200);
    expect(invoice.body.data.invoice_number).toMatch(/^INV-/);
    expect(sent.filter((text) => /^(begin|commit)/i.test(text))).toEqual([]);
    expect(sent).toHaveLength(4);
    expect(sent[2]).toMatch(/^with job_ready as .*insert into "invoices"/s);
    // The counter is released at commit without waiting for the disk; the answer waits for it.
    expect(sent[2]).toContain("set_config('synchronous_commit', 'off', true)");
    expect(sent[3]).toMatch(/^select pg_current_xact_id\(\)/);

    sent.length = 0;
    const payment = await call(ctx.app, 'POST', '/api/v1/payments', { key, body: paymentBody(invoice.body.data.uuid, 10) });
    expect(payment.status).toBe(200);
    expect(payment.body.data.invoice.balance_amount).toBe(90);
    expect(sent).toHaveLength(3);
    expect(sent[1]).toMatch(/^with settled as .*insert into "payments"/s);
    expect(sent[1]).toContain("set_config('synchronous_commit', 'off', true)");
    expect(sent[2]).toMatch(/^select pg_current_xact_id\(\)/);
  });
});
