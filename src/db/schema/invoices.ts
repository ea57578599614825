import {
  bigint,
  date,
  foreignKey,
  index,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { users } from './companies.js';
import { lifecycle, listIndexes, searchText, tenantKey, timestamptz } from './columns.js';
import { customers } from './customers.js';
import { estimates } from './estimates.js';
import { jobs } from './jobs.js';
import { locations } from './locations.js';

/** The values these tables store: the API schemas and the rules take them from here. */
export const INVOICE_TYPES = ['Full', 'Partial', 'Progress'] as const;
export type InvoiceType = (typeof INVOICE_TYPES)[number];

/** A line item as stored and answered: every amount priced (DECISIONS.md §6). */
export interface PricedLine {
  description: string | null;
  quantity: number;
  unit_price: number;
  line_total: number;
  tax_rate: number;
  tax_amount: number;
}

export const PAYMENT_TYPES = ['credit_card', 'ach', 'check', 'cash', 'other'] as const;
export type PaymentType = (typeof PAYMENT_TYPES)[number];
export const PAYMENT_STATUSES = ['Pending', 'Completed', 'Failed', 'Refunded'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

const money = (name: string) => numeric(name, { precision: 12, scale: 2 });

export const invoices = pgTable(
  'invoices',
  {
    ...tenantKey,
    invoiceNumber: text('invoice_number'),
    invoiceSeq: bigint('invoice_seq', { mode: 'number' }),
    customerUuid: uuid('customer_uuid').notNull(),
    jobUuid: uuid('job_uuid'),
    estimateUuid: uuid('estimate_uuid'),
    locationUuid: uuid('location_uuid'),
    createdByUserId: uuid('created_by_user_id').notNull(),
    invoiceType: text('invoice_type').$type<InvoiceType>().notNull().default('Full'),
    progressPercentage: numeric('progress_percentage', { precision: 9, scale: 4 }),
    issueDate: date('issue_date', { mode: 'string' }).notNull(),
    dueDate: date('due_date', { mode: 'string' }).notNull(),
    subtotal: money('subtotal').notNull(),
    taxAmount: money('tax_amount').notNull(),
    discountAmount: money('discount_amount').notNull().default('0'),
    totalAmount: money('total_amount').notNull(),
    paidAmount: money('paid_amount').notNull().default('0'),
    balanceAmount: money('balance_amount').notNull(),
    lineItems: jsonb('line_items').$type<PricedLine[]>(),
    /** The amount inputs and source amounts the invoice was priced from; an amount update re-prices from them. */
    pricingInput: jsonb('pricing_input'),
    notes: text('notes'),
    terms: text('terms'),
    internalNotes: text('internal_notes'),
    /** Stored status: Draft, Pending or Paid. Overdue is derived from due_date on read. */
    status: text('status').notNull().default('Pending'),
    searchText: text('search_text').generatedAlwaysAs(searchText('invoice_number')),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId, table.customerUuid], foreignColumns: [customers.companyId, customers.uuid] }),
    foreignKey({ columns: [table.companyId, table.jobUuid], foreignColumns: [jobs.companyId, jobs.uuid] }),
    foreignKey({ columns: [table.companyId, table.estimateUuid], foreignColumns: [estimates.companyId, estimates.uuid] }),
    foreignKey({ columns: [table.companyId, table.locationUuid], foreignColumns: [locations.companyId, locations.uuid] }),
    foreignKey({ columns: [table.companyId, table.createdByUserId], foreignColumns: [users.companyId, users.uuid] }),
    uniqueIndex('invoices_number_idx').on(table.companyId, table.invoiceSeq),
    ...listIndexes('invoices', table, { status: table.status, customer: table.customerUuid, job: table.jobUuid }),
    index('invoices_search_idx').using('gin', table.companyId, table.searchText.op('gin_trgm_ops')),
  ],
);

export const payments = pgTable(
  'payments',
  {
    ...tenantKey,
    paymentNumber: text('payment_number'),
    paymentSeq: bigint('payment_seq', { mode: 'number' }),
    invoiceUuid: uuid('invoice_uuid').notNull(),
    customerUuid: uuid('customer_uuid').notNull(),
    paymentType: text('payment_type').$type<PaymentType>().notNull(),
    paymentMethod: text('payment_method'),
    amount: money('amount').notNull(),
    processingFee: money('processing_fee').notNull().default('0'),
    netAmount: money('net_amount').notNull(),
    paymentDate: date('payment_date', { mode: 'string' }).notNull(),
    transactionId: text('transaction_id'),
    referenceNumber: text('reference_number'),
    authorizationCode: text('authorization_code'),
    paymentDetails: jsonb('payment_details').$type<Record<string, unknown>>(),
    notes: text('notes'),
    status: text('status').$type<PaymentStatus>().notNull().default('Completed'),
    processedAt: timestamptz('processed_at'),
    createdByUserId: uuid('created_by_user_id').notNull(),
    ...lifecycle,
  },
  (table) => [
    primaryKey({ columns: [table.companyId, table.uuid] }),
    foreignKey({ columns: [table.companyId, table.invoiceUuid], foreignColumns: [invoices.companyId, invoices.uuid] }),
    foreignKey({ columns: [table.companyId, table.customerUuid], foreignColumns: [customers.companyId, customers.uuid] }),
    foreignKey({ columns: [table.companyId, table.createdByUserId], foreignColumns: [users.companyId, users.uuid] }),
    uniqueIndex('payments_number_idx').on(table.companyId, table.paymentSeq),
    ...listIndexes('payments', table, { invoice: table.invoiceUuid, status: table.status, customer: table.customerUuid }),
  ],
);
