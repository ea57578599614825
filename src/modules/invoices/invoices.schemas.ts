import { z } from 'zod';
import { CustomerEmbed, CustomerResponse } from '../customers/customers.schemas.js';
import { calendarDate, longText, moneyInput, nullableString, percentInput, positivePercentInput, quantityInput, shortText, timestampOutput, uuidString, moneyOutput } from '../../shared/formats.js';
import { listQueryShape, searchQuery } from '../../shared/list-query.js';
import { INVOICE_TYPES } from '../../db/schema/index.js';
import { INVOICE_STATUSES } from './invoice-status.js';

export const InvoiceType = z.enum(INVOICE_TYPES).meta({ id: 'InvoiceType', description: 'Full, Partial or Progress.' });
export const InvoiceStatus = z
  .enum(INVOICE_STATUSES)
  .meta({ id: 'InvoiceStatus', description: 'Draft, Pending or Paid as stored; Overdue is derived on read (Pending, past due_date, balance above 0).' });

export const LineItemInput = z
  .strictObject({
    description: shortText(1000).nullable().optional().describe('What was done or sold.').meta({ example: 'Replace capacitor' }),
    quantity: quantityInput.optional().describe('Greater than 0, at most 3 decimals; default 1.').meta({ example: 3 }),
    unit_price: moneyInput.describe('Price of one unit, at most 2 decimals.').meta({ example: 19.5 }),
    tax_rate: percentInput.optional().describe('Percent, 0 to 100, at most 4 decimals; default 0.').meta({ example: 8.875 }),
  })
  .describe('line_total = quantity x unit_price rounded to cents; tax_amount = line_total x tax_rate / 100 rounded to cents.')
  .meta({ id: 'InvoiceLineItemBody' });

const progressPercentage = positivePercentInput
  .describe('Progress invoices only, required there: the share billed, greater than 0 and at most 100 (4 decimals).')
  .meta({ example: 33.3333 });

/** The most line items one invoice takes. */
export const MAX_LINE_ITEMS = 10_000;

/** The amount inputs create and preview share; priced by invoice-pricing.ts. */
const amountFields = {
  invoice_type: InvoiceType
    .optional()
    .describe('Full, Partial or Progress; default Full. A Progress invoice bills progress_percentage of subtotal and of tax.')
    .meta({ example: 'Full' }),
  progress_percentage: progressPercentage.nullable().optional(),
  line_items: z
    .array(LineItemInput)
    // Far more than any invoice lists, and a bound on one request's work (DECISIONS §11): 10,000 lines are
    // priced, stored and rendered in well under a second each, where the 60,000 a 1 MiB body could hold held
    // the event loop for about a second and a PDF worker for six.
    .max(MAX_LINE_ITEMS, `must have at most ${MAX_LINE_ITEMS} items`)
    .nullable()
    .optional()
    .describe('Up to 10,000 items. When given, subtotal is the sum of the line totals and tax_amount the sum of the line taxes.'),
  subtotal: moneyInput
    .optional()
    .describe('With line_items: absent or equal to their sum (else 400). Without: the amount billed (before a Progress share).')
    .meta({ example: 59.97 }),
  tax_amount: moneyInput.optional().describe('Overrides the computed tax (before a Progress share).').meta({ example: 5.32 }),
  discount_amount: moneyInput
    .optional()
    .describe('Default 0; subtracted after tax; may not exceed subtotal + tax_amount.')
    .meta({ example: 10 }),
};

export const CreateInvoiceBody = z
  .strictObject({
    job_uuid: uuidString.describe('A live job of the company; it moves to Invoiced.'),
    customer_uuid: uuidString.describe(
      'A live customer of the company: the customer of job_uuid, and of estimate_uuid when it is given (one customer per document; 400 invalid_reference otherwise).',
    ),
    estimate_uuid: uuidString.nullable().optional().describe('A live estimate of the company; without line_items and subtotal its base + addons and tax are billed.'),
    location_uuid: uuidString.nullable().optional().describe('A live location of the company; its timezone decides "today".'),
    issue_date: calendarDate.optional().describe('Default today in the timezone of the location, else the primary location, else America/New_York.'),
    due_date: calendarDate.describe('Required. Past it, a Pending invoice with a balance reads as Overdue.'),
    ...amountFields,
    notes: longText().nullable().optional().describe('Customer-facing notes.').meta({ example: 'Thank you for your business.' }),
    terms: longText().nullable().optional().describe('Payment terms.').meta({ example: 'Net 30' }),
    internal_notes: longText().nullable().optional().describe('Never shown to the customer.'),
    status: z
      .enum(['Pending', 'Draft'])
      .optional()
      .describe('Pending (default) or Draft. A Pending invoice whose total is 0 is Paid at once.')
      .meta({ example: 'Pending' }),
  })
  .describe(
    'invoice_number is assigned automatically and cannot be sent. Amounts without line_items or subtotal: the estimate (when estimate_uuid is given), else the job\'s actual_amount, else its estimated_amount, else 0.',
  )
  .meta({ id: 'CreateInvoiceBody' });
export type CreateInvoiceBody = z.infer<typeof CreateInvoiceBody>;

export const UpdateInvoiceBody = z
  .strictObject({
    status: InvoiceStatus
      .optional()
      .describe(
        'Moves: Draft -> Pending (a zero balance makes it Paid); Draft or Pending -> Paid only when the balance is 0; Pending -> Draft only without completed payments. A Paid invoice returns to Pending only when its balance rises (refund or deleted payment). Overdue is derived and cannot be set. The status the invoice already shows is a no-op. Any other move: 400 invalid_status_transition.',
      )
      .meta({ example: 'Pending' }),
    job_uuid: uuidString
      .optional()
      .describe(
        "Moves the invoice to another live job of the company, a job of the invoice's customer (one customer per document: 400 invalid_reference naming job_uuid otherwise). Cannot be null. Neither job's status moves and the amounts stay as billed; the invoice's own job_uuid is a no-op.",
      ),
    issue_date: calendarDate.optional().describe('YYYY-MM-DD.'),
    due_date: calendarDate.optional().describe('YYYY-MM-DD.'),
    location_uuid: uuidString.nullable().optional().describe('A live location of the company, or null.'),
    ...amountFields,
    notes: longText().nullable().optional().describe('Customer-facing notes.'),
    terms: longText().nullable().optional().describe('Payment terms.'),
    internal_notes: longText().nullable().optional().describe('Never shown to the customer.'),
  })
  .describe(
    'Amount fields (line_items, subtotal, tax_amount, discount_amount, invoice_type, progress_percentage) re-price the invoice with the create arithmetic from its stored inputs, the sent fields replacing theirs (new line_items drop a subtotal or tax given for the old ones); payments stay, so the total may not fall below paid_amount (400). job_uuid may move the invoice to another job of its customer (one customer per document); customer_uuid and estimate_uuid are fixed once an invoice exists (400 read_only when sent).',
  )
  .meta({ id: 'UpdateInvoiceBody' });
export type UpdateInvoiceBody = z.infer<typeof UpdateInvoiceBody>;

/**
 * The create's body, every field optional: "one input" gives the same numbers to both (DECISIONS §6), so a
 * client may send its create body as it is. Only the amount inputs (and the job or estimate they come from)
 * count; the other fields are checked as create checks them and otherwise ignored.
 */
export const PreviewInvoiceBody = CreateInvoiceBody.partial()
  .describe(
    "Dry run of create's arithmetic; nothing is written. Same input, same numbers as create: the create body is accepted as it is, every field optional. " +
      'Amounts come from line_items, else subtotal, else the estimate (estimate_uuid), else the job (job_uuid); the other fields are validated and ignored. ' +
      'The ids it names are checked as create checks them: each a live record of the company, the job and estimate the customer\'s (400 otherwise).',
  )
  .meta({ id: 'PreviewInvoiceBody' });
export type PreviewInvoiceBody = z.infer<typeof PreviewInvoiceBody>;

export const ListInvoicesQuery = z.strictObject({
  ...listQueryShape,
  status: z
    .enum(['All', ...INVOICE_STATUSES])
    .default('All')
    .describe('All, Draft, Pending, Paid or Overdue. Overdue: Pending, past due_date, balance above 0; Pending excludes those.'),
  customer_uuid: uuidString.optional().describe('Only this customer\'s invoices.'),
  job_uuid: uuidString.optional().describe('Only this job\'s invoices.'),
  search: searchQuery.describe('Case-insensitive substring of invoice_number.'),
});
export type ListInvoicesQuery = z.infer<typeof ListInvoicesQuery>;

export const PricedLineItem = z
  .object({
    description: nullableString,
    quantity: z.number().meta({ example: 3 }),
    unit_price: moneyOutput(19.99),
    line_total: moneyOutput(59.97),
    tax_rate: z.number().meta({ example: 8.875 }),
    tax_amount: moneyOutput(5.32),
  })
  .meta({ id: 'InvoiceLineItem' });

const invoiceFields = {
  uuid: z.string(),
  invoice_number: nullableString.meta({ example: 'INV-0042' }),
  customer_uuid: z.string(),
  job_uuid: nullableString,
  estimate_uuid: nullableString,
  location_uuid: nullableString,
  invoice_type: InvoiceType,
  progress_percentage: z.number().nullable().meta({ example: null }),
  issue_date: z.string().meta({ format: 'date', example: '2026-11-22' }),
  due_date: z.string().meta({ format: 'date', example: '2026-12-22' }),
  subtotal: moneyOutput(59.97),
  tax_amount: moneyOutput(5.32),
  discount_amount: moneyOutput(0),
  total_amount: moneyOutput(65.29),
  paid_amount: moneyOutput(0),
  balance_amount: moneyOutput(65.29),
  line_items: z.array(PricedLineItem).nullable(),
  notes: nullableString,
  terms: nullableString,
  internal_notes: nullableString,
  status: InvoiceStatus,
  created_at: timestampOutput,
  updated_at: timestampOutput,
  deleted_at: timestampOutput.nullable(),
};

export const InvoiceListItem = z
  .object({
    ...invoiceFields,
    customer: CustomerEmbed,
  })
  .meta({ id: 'InvoiceListItem' });
export type InvoiceListItem = z.infer<typeof InvoiceListItem>;

export const InvoiceResponse = z
  .object({
    ...invoiceFields,
    customer: CustomerResponse.pick({ uuid: true, first_name: true, last_name: true, email: true }),
    job: z.object({ uuid: z.string(), title: z.string(), status: z.string() }).nullable(),
    estimate: z.object({ uuid: z.string(), estimate_number: nullableString, status: z.string() }).nullable(),
    location: z.object({ uuid: z.string(), name: z.string() }).nullable(),
  })
  .meta({ id: 'Invoice' });
export type InvoiceResponse = z.infer<typeof InvoiceResponse>;

export const InvoicePreview = z
  .object({
    preview: z.object({
      subtotal: moneyOutput(59.97),
      tax_amount: moneyOutput(5.32),
      discount_amount: moneyOutput(0),
      total_amount: moneyOutput(65.29),
      balance_amount: moneyOutput(65.29).describe('Equals total_amount: nothing is paid yet.'),
    }),
    breakdown: z.object({ line_items: z.array(PricedLineItem) }),
  })
  .meta({ id: 'InvoicePreview' });
export type InvoicePreview = z.infer<typeof InvoicePreview>;
