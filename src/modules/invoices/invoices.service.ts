import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../db/client.js';
import { invoices, locations } from '../../db/schema/index.js';
import { invalidField, missingReference } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { mapPage } from '../../shared/list-query.js';
import { centsToDecimal, fromCents, moneyOut, toCents } from '../../shared/money.js';
import { bodyToColumns } from '../../shared/records.js';
import { requireReference } from '../../shared/tenant-table.js';
import { invoiceJobWith, lockJobForInvoice } from '../jobs/job-billing.js';
import type { JobRow } from '../jobs/jobs.repository.js';
import { requireOneCustomer } from '../customers/one-customer.js';
import { getRecord, recordChanges, removeRecord, type RecordedType } from '../changes/change-recorder.js';
import { withNumber } from '../numbering/numbering.service.js';
import {
  NO_AMOUNT,
  priceInvoice,
  type AmountSource,
  type InvoicePricing,
  type PricingInput,
} from './invoice-pricing.js';
import { settleInvoice } from './invoice-settlement.js';
import { businessToday, requestedStatus, settledStatus } from './invoice-status.js';
import { toInvoiceListItem, toInvoiceResponse } from './invoices.mapper.js';
import * as repository from './invoices.repository.js';
import type {
  CreateInvoiceBody,
  InvoiceListItem,
  InvoicePreview,
  InvoiceResponse,
  ListInvoicesQuery,
  PreviewInvoiceBody,
  UpdateInvoiceBody,
} from './invoices.schemas.js';

/** A job's billable amounts, as stored. */
type JobAmounts = Pick<JobRow, 'actualAmount' | 'estimatedAmount'>;

/** The live estimate an invoice names, or null when it names none; 400 when it is not one of the company's. */
async function estimateOf(db: Db, companyId: string, estimateUuid: string | null | undefined) {
  if (!estimateUuid) return null;
  const estimate = await repository.findEstimateAmounts(db, companyId, estimateUuid);
  if (!estimate) throw missingReference('estimate_uuid');
  return estimate;
}

/**
 * What the invoice bills without line items or a subtotal: the estimate's base + addons and tax, else the
 * job's actual_amount, else its estimated_amount, else 0.
 */
function amountSource(job: JobAmounts | null, estimate: repository.EstimateAmounts | null): AmountSource {
  if (estimate) return { subtotal: toCents(estimate.baseAmount) + toCents(estimate.addonsAmount), tax: toCents(estimate.taxAmount) };
  const jobAmount = job?.actualAmount ?? job?.estimatedAmount ?? null;
  return jobAmount === null ? NO_AMOUNT : { subtotal: toCents(jobAmount), tax: 0 };
}

function pricingColumns(pricing: InvoicePricing) {
  return {
    subtotal: centsToDecimal(pricing.subtotal),
    taxAmount: centsToDecimal(pricing.tax),
    discountAmount: centsToDecimal(pricing.discount),
    totalAmount: centsToDecimal(pricing.total),
    paidAmount: '0.00',
    balanceAmount: centsToDecimal(pricing.total),
    lineItems: pricing.lines,
  };
}

const AMOUNT_FIELDS = ['invoice_type', 'progress_percentage', 'line_items', 'subtotal', 'tax_amount', 'discount_amount'] as const;

/** What an invoice was priced from: the amount inputs of the request and the job's or estimate's amounts. */
interface StoredPricing {
  input: PricingInput;
  source: AmountSource;
}

function pricingInputOf(body: PricingInput): PricingInput {
  const input: Record<string, unknown> = {};
  for (const field of AMOUNT_FIELDS) if (body[field] !== undefined) input[field] = body[field];
  return input as PricingInput;
}

/** The stored pricing; for rows written without it, the stored amounts taken as given. */
function storedPricing(invoice: repository.InvoiceRow): StoredPricing {
  if (invoice.pricingInput) return invoice.pricingInput as StoredPricing;
  const lines = invoice.lineItems;
  return {
    input: {
      invoice_type: invoice.invoiceType,
      progress_percentage: invoice.progressPercentage === null ? null : Number(invoice.progressPercentage),
      line_items: lines?.map(({ description, quantity, unit_price, tax_rate }) => ({ description, quantity, unit_price, tax_rate })) ?? null,
      ...(lines ? {} : { subtotal: moneyOut(invoice.subtotal), tax_amount: moneyOut(invoice.taxAmount) }),
      discount_amount: moneyOut(invoice.discountAmount),
    },
    source: NO_AMOUNT,
  };
}

/**
 * The inputs of an amount update: the stored ones with the sent fields replacing theirs. New line items
 * replace the old ones together with a subtotal or tax given for those.
 */
function repricedInput(stored: PricingInput, body: UpdateInvoiceBody): PricingInput {
  const input: PricingInput = { ...stored, ...pricingInputOf(body) };
  if (body.line_items !== undefined) {
    if (body.subtotal === undefined) delete input.subtotal;
    if (body.tax_amount === undefined) delete input.tax_amount;
  }
  return input;
}

/** The dry run of create's arithmetic: same input, same numbers; nothing is written. */
export async function previewInvoice(db: Db, companyId: string, body: PreviewInvoiceBody): Promise<InvoicePreview> {
  const job = body.job_uuid ? await repository.findJobAmounts(db, companyId, body.job_uuid) : null;
  if (body.job_uuid && !job) throw missingReference('job_uuid');
  const pricing = priceInvoice(body, amountSource(job, await estimateOf(db, companyId, body.estimate_uuid)));
  return {
    preview: {
      subtotal: fromCents(pricing.subtotal),
      tax_amount: fromCents(pricing.tax),
      discount_amount: fromCents(pricing.discount),
      total_amount: fromCents(pricing.total),
      balance_amount: fromCents(pricing.total),
    },
    breakdown: { line_items: pricing.lines ?? [] },
  };
}

/**
 * One transaction: references checked, amounts priced, the job moved to Invoiced (and stamped paid_at when a
 * zero total makes the invoice Paid) and the row written. Its GET form is built from the rows in hand; the
 * number is taken at commit (see withNumber).
 */
async function create(db: Db, actor: Actor, body: CreateInvoiceBody) {
  const { companyId } = actor;
  const uuid = uuidv7();
  const created = await recordChanges(db, actor, async (changes) => {
    const { tx } = changes;
    const locationUuid = body.location_uuid ?? null;
    const { customer, location, timezone } = await repository.findInvoiceParties(tx, companyId, body.customer_uuid, locationUuid);
    if (!customer) throw missingReference('customer_uuid');
    if (locationUuid && !location) throw missingReference('location_uuid');
    const job = await lockJobForInvoice(changes, body.job_uuid);
    if (!job) throw missingReference('job_uuid');
    const estimate = await estimateOf(tx, companyId, body.estimate_uuid);
    requireOneCustomer('invoice', body.customer_uuid, [
      { field: 'job_uuid', customerUuid: job.job.customerUuid },
      estimate && { field: 'estimate_uuid', customerUuid: estimate.customerUuid },
    ]);
    const source = amountSource(job.job, estimate);
    const pricing = priceInvoice(body, source);
    const status = settledStatus(body.status ?? 'Pending', pricing.total);
    // The job moves to Invoiced in the invoice's own insert: one statement (job-billing.ts).
    const { cte, name, job: invoicedJob } = invoiceJobWith(changes, job, { paid: status === 'Paid' });
    const { written, ...inserted } = await repository.insertInvoiceWith(tx, {
      companyId,
      uuid,
      customerUuid: body.customer_uuid,
      jobUuid: body.job_uuid,
      estimateUuid: body.estimate_uuid ?? null,
      locationUuid,
      createdByUserId: actor.userId,
      invoiceType: body.invoice_type ?? 'Full',
      progressPercentage: body.progress_percentage == null ? null : String(body.progress_percentage),
      issueDate: body.issue_date ?? businessToday(timezone),
      dueDate: body.due_date,
      ...pricingColumns(pricing),
      pricingInput: { input: pricingInputOf(body), source } satisfies StoredPricing,
      notes: body.notes ?? null,
      terms: body.terms ?? null,
      internalNotes: body.internal_notes ?? null,
      status,
    }, cte, name);
    if (written !== 1) throw new Error(`The job ${body.job_uuid} was not moved to Invoiced`);
    changes.created(
      'invoice',
      uuid,
      toInvoiceResponse({
        ...inserted,
        customer,
        job: { uuid: invoicedJob.uuid, title: invoicedJob.title, status: invoicedJob.status },
        estimate: estimate && { uuid: estimate.uuid, estimateNumber: estimate.estimateNumber, status: estimate.status },
        location,
      }),
    );
    return changes.answer('invoice', uuid);
  });
  return withNumber(db, companyId, 'invoice', created);
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdateInvoiceBody) {
  const { companyId } = actor;
  return recordChanges(db, actor, async (changes) => {
    const { tx } = changes;
    const invoice = await changes.target<repository.InvoiceRow>('invoice', uuid);
    await requireReference(tx, locations, companyId, 'location_uuid', body.location_uuid);
    const repriced = AMOUNT_FIELDS.some((field) => body[field] !== undefined) ? reprice(invoice, body) : null;
    const current = repriced ? { ...invoice, ...repriced.columns } : invoice;
    let status = invoice.status;
    if (body.status !== undefined) {
      const shown = (await repository.findShownStatus(tx, companyId, uuid)) ?? invoice.status;
      status = requestedStatus(
        { stored: invoice.status, shown, balance: toCents(current.balanceAmount), paid: toCents(invoice.paidAmount) },
        body.status,
      );
    }
    const columns = { ...bodyToColumns(body, { skip: ['status', ...AMOUNT_FIELDS] }), ...repriced?.columns };
    if (Object.keys(columns).length > 0) await repository.updateInvoice(tx, companyId, uuid, columns);
    await settleInvoice(changes, current, status);
    return changes.answer('invoice', uuid);
  });
}

/** Re-prices an invoice whose amount inputs change; its payments stay, so the total may not fall below them. */
function reprice(invoice: repository.InvoiceRow, body: UpdateInvoiceBody) {
  const stored = storedPricing(invoice);
  const input = repricedInput(stored.input, body);
  const pricing = priceInvoice(input, stored.source);
  const paid = toCents(invoice.paidAmount);
  if (pricing.total < paid) {
    throw invalidField('total_amount', `would fall below the amount already paid (${fromCents(paid)})`);
  }
  return {
    columns: {
      ...pricingColumns(pricing),
      paidAmount: invoice.paidAmount,
      balanceAmount: centsToDecimal(pricing.total - paid),
      invoiceType: input.invoice_type ?? 'Full',
      progressPercentage: input.progress_percentage == null ? null : String(input.progress_percentage),
      pricingInput: { input, source: stored.source } satisfies StoredPricing,
    },
  };
}

declare module '../changes/change-recorder.js' {
  interface RecordedObjects {
    invoice: InvoiceResponse;
  }
}

/** How an invoice is read: by its GET and by the change recorder (listed in events/recorded-types.ts). */
export const invoiceRecords: RecordedType<InvoiceResponse> = {
  table: invoices,
  noun: 'Invoice',
  embeds: ['customer', 'job', 'estimate', 'location'],
  async find(db, companyId, uuid, includeDeleted) {
    const row = await repository.findInvoiceDetail(db, companyId, uuid, includeDeleted);
    return row && toInvoiceResponse(row);
  },
  async lockAndLoad(db, companyId, uuid, includeDeleted) {
    const found = await repository.lockInvoiceDetail(db, companyId, uuid, includeDeleted);
    return found && { row: found.invoice, record: toInvoiceResponse(found) };
  },
};

export const invoicesService: CrudService<InvoiceListItem, InvoiceResponse, CreateInvoiceBody, UpdateInvoiceBody, ListInvoicesQuery> = {
  list: async (db, companyId, query) => mapPage(await repository.listInvoices(db, companyId, query), toInvoiceListItem),
  get: (db, companyId, uuid, includeDeleted) => getRecord(invoiceRecords, db, companyId, uuid, includeDeleted),
  create,
  update,
  remove: (db, actor, uuid) => removeRecord(db, actor, 'invoice', uuid),
};
