import { sql } from 'drizzle-orm';
import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { invoices, locations } from '../../db/schema/index.js';
import { invalidField, missingReference } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { CrudService } from '../../shared/crud-routes.js';
import { mapPage } from '../../shared/list-query.js';
import { centsToDecimal, fromCents, moneyOut, toCents } from '../../shared/money.js';
import { bodyToColumns } from '../../shared/records.js';
import { newRow } from '../../shared/record-rows.js';
import { requireReference } from '../../shared/tenant-table.js';
import { invoicedJobInStatement, invoiceJobWith, lockJobForInvoice, readJobForInvoice } from '../jobs/job-billing.js';
import type { JobRow, JobWithRelations } from '../jobs/jobs.repository.js';
import { findJobCustomer } from '../jobs/jobs.repository.js';
import { requireOneCustomer, requirePreviewReferences } from '../customers/one-customer.js';
import { createCheckedRecord, getRecord, recordChanges, removeRecord, type RecordedType } from '../changes/change-recorder.js';
import { newMark } from '../changes/changes.repository.js';
import { withNumber } from '../numbering/numbering.service.js';
import {
  NO_AMOUNT,
  priceInvoice,
  type AmountSource,
  type InvoicePricing,
  type PricingInput,
} from './invoice-pricing.js';
import { settleInvoice } from './invoice-settlement.js';
import { businessToday, requestedStatus, settledStatus, type InvoiceStatus } from './invoice-status.js';
import { toInvoiceListItem, toInvoiceResponse } from './invoices.mapper.js';
import * as repository from './invoices.repository.js';
import { MAX_LINE_ITEMS } from './invoices.schemas.js';
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

/**
 * The most line items one list page may carry (two invoices of the most lines each). A page of a hundred of
 * the largest invoices would be a 100 MB answer, built and held in memory by the instance every company
 * shares (DECISIONS §11); such a page is refused with a clear error asking for a smaller limit.
 */
export const MAX_PAGE_LINE_ITEMS = 2 * MAX_LINE_ITEMS;

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
 * replace the old ones together with a subtotal or tax given for those. `line_items: null` on an invoice
 * that has none changes nothing (null clears a field; this one is already clear), so the subtotal and tax
 * it was given stay.
 */
function repricedInput(stored: PricingInput, body: UpdateInvoiceBody): PricingInput {
  const input: PricingInput = { ...stored, ...pricingInputOf(body) };
  const linesChange = body.line_items !== undefined && !(body.line_items === null && stored.line_items == null);
  if (linesChange) {
    if (body.subtotal === undefined) delete input.subtotal;
    if (body.tax_amount === undefined) delete input.tax_amount;
  }
  return input;
}

/** The dry run of create's arithmetic: same input, same numbers; nothing is written. */
export async function previewInvoice(db: Db, companyId: string, body: PreviewInvoiceBody): Promise<InvoicePreview> {
  const job = body.job_uuid ? await repository.findJobAmounts(db, companyId, body.job_uuid) : null;
  if (body.job_uuid && !job) throw missingReference('job_uuid');
  const estimate = await estimateOf(db, companyId, body.estimate_uuid);
  await requirePreviewReferences(db, companyId, 'invoice', body, [
    job && { field: 'job_uuid', customerUuid: job.customerUuid },
    estimate && { field: 'estimate_uuid', customerUuid: estimate.customerUuid },
  ]);
  const pricing = priceInvoice(body, amountSource(job, estimate));
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

/** What an invoice create found of what it names: its customer and location, its job, its estimate. */
interface InvoiceReferences<Job extends JobWithRelations> {
  parties: repository.InvoiceParties;
  job: Job | null;
  estimate: repository.EstimateAmounts | null;
}

/**
 * An invoice create's row from what it found: references checked (400 naming the first missing one, then
 * one customer for the document), amounts priced, status settled (a zero total is Paid at once).
 */
function plannedInvoice<Job extends JobWithRelations>(actor: Actor, body: CreateInvoiceBody, uuid: string, found: InvoiceReferences<Job>) {
  const { parties, job, estimate } = found;
  const locationUuid = body.location_uuid ?? null;
  if (!parties.customer) throw missingReference('customer_uuid');
  if (locationUuid && !parties.location) throw missingReference('location_uuid');
  if (!job) throw missingReference('job_uuid');
  if (body.estimate_uuid && !estimate) throw missingReference('estimate_uuid');
  requireOneCustomer('invoice', body.customer_uuid, [
    { field: 'job_uuid', customerUuid: job.job.customerUuid },
    estimate && { field: 'estimate_uuid', customerUuid: estimate.customerUuid },
  ]);
  const source = amountSource(job.job, estimate);
  const pricing = priceInvoice(body, source);
  const status = settledStatus(body.status ?? 'Pending', pricing.total);
  const values = {
    companyId: actor.companyId,
    uuid,
    customerUuid: body.customer_uuid,
    jobUuid: body.job_uuid,
    estimateUuid: body.estimate_uuid ?? null,
    locationUuid,
    createdByUserId: actor.userId,
    invoiceType: body.invoice_type ?? 'Full',
    progressPercentage: body.progress_percentage == null ? null : String(body.progress_percentage),
    issueDate: body.issue_date ?? businessToday(parties.timezone),
    dueDate: body.due_date,
    ...pricingColumns(pricing),
    pricingInput: { input: pricingInputOf(body), source } satisfies StoredPricing,
    notes: body.notes ?? null,
    terms: body.terms ?? null,
    internalNotes: body.internal_notes ?? null,
    status,
  };
  return { values, status, customer: parties.customer, location: parties.location, job, estimate };
}

/** The invoice's GET form from its row and what it embeds. */
function invoiceRecord(
  invoice: repository.InvoiceRow,
  shownStatus: InvoiceStatus,
  planned: ReturnType<typeof plannedInvoice<JobWithRelations>>,
  job: Pick<JobRow, 'uuid' | 'title' | 'status'>,
): InvoiceResponse {
  const { customer, estimate, location } = planned;
  return toInvoiceResponse({
    invoice,
    shownStatus,
    customer,
    job: { uuid: job.uuid, title: job.title, status: job.status },
    estimate: estimate && { uuid: estimate.uuid, estimateNumber: estimate.estimateNumber, status: estimate.status },
    location,
  });
}

/**
 * An invoice create. The usual one is one statement after its reads (createInStatement); when its job changed
 * between the two, it is a transaction that locks the job (createInTransaction). Either way the job moves to
 * Invoiced (and gets paid_at when a zero total makes the invoice Paid) with the invoice, and the number is
 * the one the invoice got at commit (see withNumber).
 */
async function create(db: Db, actor: Actor, body: CreateInvoiceBody) {
  const uuid = newRecordId();
  const created = (await createInStatement(db, actor, body, uuid)) ?? (await createInTransaction(db, actor, body, uuid));
  return withNumber(db, actor.companyId, 'invoice', created);
}

/**
 * The references read without locks, then one statement (createCheckedRecord): the job locked and still the
 * version read, the invoice, the job's move, the invoice.created and job.updated events and a keyed request's
 * key. The status the invoice reads as (Overdue past its due date) is computed by the statement from the row
 * it inserts. Null when the job changed since it was read: nothing was written.
 */
async function createInStatement(db: Db, actor: Actor, body: CreateInvoiceBody, uuid: string): Promise<InvoiceResponse | null> {
  const { companyId } = actor;
  const [parties, job, estimate] = await Promise.all([
    repository.findInvoiceParties(db, companyId, body.customer_uuid, body.location_uuid ?? null),
    readJobForInvoice(db, companyId, body.job_uuid),
    body.estimate_uuid ? repository.findEstimateAmounts(db, companyId, body.estimate_uuid) : null,
  ]);
  const planned = plannedInvoice(actor, body, uuid, { parties, job, estimate });
  const now = new Date();
  const moved = invoicedJobInStatement(planned.job, { paid: planned.status === 'Paid' }, now);
  const row = newRow<repository.InvoiceRow>(invoices, planned.values, now);
  const record = invoiceRecord(row, planned.status, planned, moved.job);
  const shown = newMark('status', sql`(select to_json(shown_status)::text from inserted)`);
  // The recorded record holds the status's mark until the statement reads it from the inserted row.
  const marked = { ...record, status: shown.mark } as unknown as InvoiceResponse;
  const written = await createCheckedRecord(db, actor, 'invoice', row, marked, {
    name: 'billing_job',
    before: moved.before,
    source: sql`from job_ready`,
    returning: repository.insertedInvoiceStatus,
    after: moved.after,
    params: moved.params,
    events: moved.event ? [moved.event] : [],
    marks: [shown],
    // The company's number counter is held from the commit's numbering to its end.
    flushAfterCommit: true,
  });
  if (!written) return null;
  return { ...record, status: JSON.parse(written[shown.mark]) as InvoiceStatus };
}

/** The create in one transaction, the job locked from its read to the commit. */
function createInTransaction(db: Db, actor: Actor, body: CreateInvoiceBody, uuid: string) {
  return recordChanges(db, actor, async (changes) => {
    const { tx, companyId } = changes;
    const parties = await repository.findInvoiceParties(tx, companyId, body.customer_uuid, body.location_uuid ?? null);
    const job = await lockJobForInvoice(changes, body.job_uuid);
    const estimate = body.estimate_uuid ? await repository.findEstimateAmounts(tx, companyId, body.estimate_uuid) : null;
    const planned = plannedInvoice(actor, body, uuid, { parties, job, estimate });
    // The job moves to Invoiced in the invoice's own insert: one statement (job-billing.ts).
    const { cte, name, job: invoicedJob } = invoiceJobWith(changes, planned.job, { paid: planned.status === 'Paid' });
    const { written, invoice, shownStatus } = await repository.insertInvoiceWith(tx, planned.values, cte, name);
    if (written !== 1) throw new Error(`The job ${body.job_uuid} was not moved to Invoiced`);
    changes.created('invoice', uuid, invoiceRecord(invoice, shownStatus, planned, invoicedJob));
    return changes.answer('invoice', uuid);
  });
}

async function update(db: Db, actor: Actor, uuid: string, body: UpdateInvoiceBody) {
  const { companyId } = actor;
  return recordChanges(db, actor, async (changes) => {
    const { tx } = changes;
    const invoice = await changes.target<repository.InvoiceRow>('invoice', uuid);
    await requireReference(tx, locations, companyId, 'location_uuid', body.location_uuid);
    const jobUuid = await movedToJob(tx, companyId, invoice, body.job_uuid);
    const repriced = AMOUNT_FIELDS.some((field) => body[field] !== undefined) ? reprice(invoice, body) : null;
    // Settled as it is after the update: a move to Paid stamps paid_at on the job it bills now.
    const current = { ...invoice, ...repriced?.columns, ...(jobUuid ? { jobUuid } : {}) };
    let status = invoice.status;
    if (body.status !== undefined) {
      const shown = (await repository.findShownStatus(tx, companyId, uuid)) ?? invoice.status;
      status = requestedStatus(
        { stored: invoice.status, shown, balance: toCents(current.balanceAmount), paid: toCents(invoice.paidAmount) },
        body.status,
      );
    }
    const columns = { ...bodyToColumns(body, { skip: ['status', 'job_uuid', ...AMOUNT_FIELDS] }), ...repriced?.columns, ...(jobUuid ? { jobUuid } : {}) };
    if (Object.keys(columns).length > 0) await repository.updateInvoice(tx, companyId, uuid, columns);
    await settleInvoice(changes, current, status);
    return changes.answer('invoice', uuid);
  });
}

/**
 * The job an update moves the invoice to; undefined when job_uuid is absent or the invoice's own (no change,
 * nothing checked). It must be a live job of the company (400 naming job_uuid) of the invoice's customer, one
 * customer per document (DECISIONS.md §8): the customer cannot change and is its estimate's too, so this one
 * check keeps both. The job is share-locked to the commit, so its customer cannot change meanwhile. Neither
 * job's status moves (only a create invoices a job), and the amounts stay as billed.
 */
async function movedToJob(tx: Db, companyId: string, invoice: repository.InvoiceRow, jobUuid: string | undefined): Promise<string | undefined> {
  if (jobUuid === undefined || jobUuid === invoice.jobUuid) return undefined;
  const customerUuid = await findJobCustomer(tx, companyId, jobUuid, { lock: 'share' });
  if (customerUuid === null) throw missingReference('job_uuid');
  requireOneCustomer('invoice', invoice.customerUuid, [{ field: 'job_uuid', customerUuid }], 'source');
  return jobUuid;
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
  list: async (db, companyId, query) => {
    // A page that cannot pass the bound (two invoices) is not weighed.
    const lines = query.limit * MAX_LINE_ITEMS > MAX_PAGE_LINE_ITEMS ? await repository.pageLineItems(db, companyId, query) : 0;
    if (lines > MAX_PAGE_LINE_ITEMS) {
      throw invalidField(
        'limit',
        `asks for a page of ${lines} line items, more than the ${MAX_PAGE_LINE_ITEMS} one page may carry; ask for fewer invoices a page`,
        'out_of_range',
      );
    }
    return mapPage(await repository.listInvoices(db, companyId, query), toInvoiceListItem);
  },
  get: (db, companyId, uuid, includeDeleted) => getRecord(invoiceRecords, db, companyId, uuid, includeDeleted),
  create,
  update,
  remove: (db, actor, uuid) => removeRecord(db, actor, 'invoice', uuid),
};
