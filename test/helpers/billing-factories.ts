import { and, count, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import type { Database } from '../../src/db/client.js';
import { estimates, invoices, jobs, payments, templates } from '../../src/db/schema/index.js';
import { centsToDecimal, sumCents, toCents } from '../../src/shared/money.js';
import { createVia, makeCompany, makeCustomer, type TestCompany } from './factories.js';
import type { JobStatus } from '../../src/db/schema/index.js';

/**
 * Jobs and estimates are written straight into their tables: invoices and payments are tested on
 * their own, without depending on the jobs and estimates endpoints.
 */

export interface JobOptions {
  title?: string;
  status?: JobStatus;
  estimatedAmount?: string | null;
  actualAmount?: string | null;
  locationUuid?: string | null;
}

export async function insertJob(database: Database, companyId: string, customerUuid: string, options: JobOptions = {}) {
  const uuid = uuidv7();
  await database.db.insert(jobs).values({
    companyId,
    uuid,
    customerUuid,
    title: options.title ?? 'Replace water heater',
    status: options.status ?? 'Complete',
    estimatedAmount: options.estimatedAmount ?? null,
    actualAmount: options.actualAmount ?? null,
    locationUuid: options.locationUuid ?? null,
  });
  return uuid;
}

export async function readJob(database: Database, companyId: string, uuid: string) {
  const [row] = await database.db.select().from(jobs).where(and(eq(jobs.companyId, companyId), eq(jobs.uuid, uuid)));
  return row;
}

export async function softDeleteJob(database: Database, companyId: string, uuid: string) {
  await database.db
    .update(jobs)
    .set({ deletedAt: new Date() })
    .where(and(eq(jobs.companyId, companyId), eq(jobs.uuid, uuid)));
}

export interface EstimateAmounts {
  baseAmount: string;
  addonsAmount: string;
  taxAmount: string;
}

export async function insertEstimate(
  database: Database,
  companyId: string,
  userId: string,
  customerUuid: string,
  amounts: EstimateAmounts,
) {
  const templateUuid = uuidv7();
  await database.db.insert(templates).values({
    companyId,
    uuid: templateUuid,
    name: 'Tune-up',
    pricingType: 'flat',
    basePrice: amounts.baseAmount,
  });
  const uuid = uuidv7();
  const total = sumCents([amounts.baseAmount, amounts.addonsAmount, amounts.taxAmount].map(toCents));
  await database.db.insert(estimates).values({
    companyId,
    uuid,
    estimateNumber: `EST-${uuid.slice(-4)}`,
    customerUuid,
    templateUuid,
    createdByUserId: userId,
    status: 'Accepted',
    templateName: 'Tune-up',
    pricingType: 'flat',
    ...amounts,
    totalAmount: centsToDecimal(total),
  });
  return uuid;
}

/** A company with one customer and one completed job: what every billing test starts from. */
export interface BillingSetup {
  company: TestCompany;
  customer: { uuid: string; first_name: string; last_name: string; email: string | null };
  jobUuid: string;
}

export async function makeBillingSetup(
  app: FastifyInstance,
  database: Database,
  jobOptions: JobOptions = {},
): Promise<BillingSetup> {
  const company = await makeCompany(database);
  const customer = await makeCustomer(app, company.key, { email: 'dana@example.com' });
  const jobUuid = await insertJob(database, company.companyId, customer.uuid, jobOptions);
  return { company, customer, jobUuid };
}

/** Invoice body for the setup's job and customer, due far in the future. */
export function invoiceBody(setup: BillingSetup, overrides: Record<string, unknown> = {}) {
  return { job_uuid: setup.jobUuid, customer_uuid: setup.customer.uuid, due_date: '2099-12-31', ...overrides };
}

export function makeInvoice(app: FastifyInstance, setup: BillingSetup, overrides: Record<string, unknown> = {}) {
  return createVia(app, setup.company.key, '/invoices', invoiceBody(setup, overrides));
}

/** An invoice of exactly `total` (one untaxed line). */
export function makeInvoiceOf(app: FastifyInstance, setup: BillingSetup, total: number, overrides: Record<string, unknown> = {}) {
  return makeInvoice(app, setup, { line_items: [{ description: 'Service', unit_price: total }], ...overrides });
}

export function paymentBody(invoiceUuid: string, amount: number, overrides: Record<string, unknown> = {}) {
  return { invoice_uuid: invoiceUuid, payment_type: 'cash', amount, payment_date: '2026-11-20', ...overrides };
}

export function makePayment(app: FastifyInstance, key: string, invoiceUuid: string, amount: number, overrides: Record<string, unknown> = {}) {
  return createVia(app, key, '/payments', paymentBody(invoiceUuid, amount, overrides));
}

/** Rows of the company in a table, soft-deleted ones included: proves that nothing was written. */
export async function countRowsOf(database: Database, table: typeof invoices | typeof payments, companyId: string) {
  const [row] = await database.db.select({ total: count() }).from(table).where(eq(table.companyId, companyId));
  return Number(row.total);
}
