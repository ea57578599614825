import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import createClient from 'openapi-fetch';
import { describe, expect, it } from 'vitest';
import type { paths } from '../clients/typescript/schema.js';
import { buildTestApp } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';

/**
 * The generated TypeScript client (clients/typescript/schema.d.ts + openapi-fetch) against a real listener:
 * a whole billing flow, typed end to end. If the document and the routes disagree, this stops compiling or
 * fails here.
 */

const ctx = await buildTestApp();
const company = await makeCompany(ctx.database);
await ctx.app.listen({ port: 0, host: '127.0.0.1' });
const { port } = ctx.app.server.address() as AddressInfo;

const client = createClient<paths>({
  baseUrl: `http://127.0.0.1:${port}`,
  headers: { authorization: `Bearer ${company.key}` },
});

/** The data of a successful call; fails the test with the error body otherwise. */
function unwrap<T>(result: { data?: { success: true; data: T }; error?: unknown; response: Response }): T {
  expect(result.error, `${result.response.status} ${JSON.stringify(result.error)}`).toBeUndefined();
  expect(result.response.status).toBe(200);
  return result.data!.data;
}

describe('typed client (openapi-fetch over the generated schema)', () => {
  it('runs customer -> job -> template -> estimate -> invoice -> payments and reads the numbers back', async () => {
    const customer = unwrap(
      await client.POST('/api/v1/customers', {
        body: { first_name: 'Dana', last_name: 'Reyes', email: 'dana@example.com', customer_type: 'Residential' },
      }),
    );
    expect(customer.email).toBe('dana@example.com');

    const job = unwrap(
      await client.POST('/api/v1/jobs', { body: { customer_uuid: customer.uuid, title: 'Replace the heat pump', estimated_amount: 500 } }),
    );
    expect(job.status).toBe('New');
    expect(job.customer.uuid).toBe(customer.uuid);

    const template = unwrap(
      await client.POST('/api/v1/templates', {
        body: {
          name: 'Heat pump service',
          pricing_type: 'tiered',
          tiers: { good: 100, better: 150.5, best: 200 },
          addons: [{ id: 'filter', name: 'Filter', price: 24.99 }],
          tax_rate: 8.25,
        },
      }),
    );
    expect(template.tiers).toEqual({ good: 100, better: 150.5, best: 200 });

    // Estimate: base 150.50 x 2 = 301.00; add-ons 24.99; tax 325.99 x 8.25% = 26.89; total 352.88.
    const pricing = { template_uuid: template.uuid, selected_tier: 'better' as const, quantity: 2, selected_addons: ['filter'] };
    const preview = unwrap(await client.POST('/api/v1/estimates/preview', { body: pricing }));
    expect(preview.preview).toEqual({ base_amount: 301, addons_amount: 24.99, tax_amount: 26.89, total_amount: 352.88 });
    const estimate = unwrap(
      await client.POST('/api/v1/estimates', { body: { ...pricing, customer_uuid: customer.uuid, job_uuid: job.uuid } }),
    );
    expect(estimate).toMatchObject({ status: 'Pending', base_amount: 301, addons_amount: 24.99, tax_amount: 26.89, total_amount: 352.88 });
    expect(estimate.estimate_number).toBe('EST-0001');
    const estimateRead = unwrap(await client.GET('/api/v1/estimates/{uuid}', { params: { path: { uuid: estimate.uuid } } }));
    expect(estimateRead.template).toEqual({ uuid: template.uuid, name: 'Heat pump service', pricing_type: 'tiered' });
    expect(estimateRead.job?.uuid).toBe(job.uuid);

    // Invoice: 3 x 85.00 = 255.00 (+8.25% = 21.04) and 2.5 x 19.99 = 49.98 (no tax); subtotal 304.98,
    // tax 21.04, discount 10, total 316.02.
    const billing = {
      line_items: [
        { description: 'Labor', quantity: 3, unit_price: 85, tax_rate: 8.25 },
        { description: 'Parts', quantity: 2.5, unit_price: 19.99 },
      ],
      discount_amount: 10,
    };
    const invoicePreview = unwrap(await client.POST('/api/v1/invoices/preview', { body: { ...billing, job_uuid: job.uuid } }));
    expect(invoicePreview.preview).toEqual({
      subtotal: 304.98,
      tax_amount: 21.04,
      discount_amount: 10,
      total_amount: 316.02,
      balance_amount: 316.02,
    });
    expect(invoicePreview.breakdown.line_items.map((line) => [line.line_total, line.tax_amount])).toEqual([
      [255, 21.04],
      [49.98, 0],
    ]);
    const invoice = unwrap(
      await client.POST('/api/v1/invoices', {
        body: { ...billing, job_uuid: job.uuid, customer_uuid: customer.uuid, estimate_uuid: estimate.uuid, due_date: '2030-01-31' },
      }),
    );
    expect(invoice).toMatchObject({
      invoice_number: 'INV-0001',
      status: 'Pending',
      subtotal: 304.98,
      tax_amount: 21.04,
      discount_amount: 10,
      total_amount: 316.02,
      paid_amount: 0,
      balance_amount: 316.02,
    });
    expect(invoice.line_items).toHaveLength(2);

    // A card payment with a fee, then the rest in cash.
    const card = unwrap(
      await client.POST('/api/v1/payments', {
        body: { invoice_uuid: invoice.uuid, payment_type: 'credit_card', amount: 100, processing_fee: 2.9, payment_date: '2026-11-20' },
      }),
    );
    expect(card).toMatchObject({ status: 'Completed', amount: 100, processing_fee: 2.9, net_amount: 97.1, payment_number: 'PAY-0001' });
    expect(card.customer_uuid).toBe(customer.uuid);

    const afterCard = unwrap(await client.GET('/api/v1/invoices/{uuid}', { params: { path: { uuid: invoice.uuid } } }));
    expect(afterCard).toMatchObject({ status: 'Pending', paid_amount: 100, balance_amount: 216.02 });
    expect(afterCard.estimate?.uuid).toBe(estimate.uuid);

    const cash = unwrap(
      await client.POST('/api/v1/payments', {
        body: { invoice_uuid: invoice.uuid, payment_type: 'cash', amount: 216.02, payment_date: '2026-11-21' },
      }),
    );
    const paidPayment = unwrap(await client.GET('/api/v1/payments/{uuid}', { params: { path: { uuid: cash.uuid } } }));
    expect(paidPayment.invoice).toMatchObject({ uuid: invoice.uuid, total_amount: 316.02, balance_amount: 0, status: 'Paid' });

    const paid = unwrap(await client.GET('/api/v1/invoices/{uuid}', { params: { path: { uuid: invoice.uuid } } }));
    expect(paid).toMatchObject({ status: 'Paid', paid_amount: 316.02, balance_amount: 0 });
    const jobRead = unwrap(await client.GET('/api/v1/jobs/{uuid}', { params: { path: { uuid: job.uuid } } }));
    expect(jobRead.status).toBe('Invoiced');
    expect(jobRead.paid_at).not.toBeNull();

    const payments = unwrap(await client.GET('/api/v1/payments', { params: { query: { invoice_uuid: invoice.uuid } } }));
    expect(payments.pagination.total).toBe(2);
    expect(payments.payments.map((payment) => payment.amount).sort()).toEqual([100, 216.02]);
  });

  it('types the error envelope too', async () => {
    const missing = await client.GET('/api/v1/invoices/{uuid}', { params: { path: { uuid: randomUUID() } } });
    expect(missing.response.status).toBe(404);
    expect(missing.data).toBeUndefined();
    expect(missing.error?.error.code).toBe('not_found');

    const invalid = await client.POST('/api/v1/payments', {
      body: { invoice_uuid: randomUUID(), payment_type: 'cash', amount: 5, payment_date: '2026-11-20' },
    });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error?.error.code).toBe('validation_error');
  });
});
