import { moneyOut } from '../../shared/money.js';
import type { InvoiceStatus } from './invoice-status.js';
import type { InvoiceDetailRow, InvoiceListRow } from './invoices.repository.js';
import type { InvoiceListItem, InvoiceResponse } from './invoices.schemas.js';

/**
 * The invoice's own fields; the field order is the JSON order (ETags hash it). The status shown is the
 * one read (Overdue derived), not the stored one; the sequence, author and pricing input stay internal.
 */
function invoiceFields(row: InvoiceListRow['invoice'], shownStatus: InvoiceStatus): Omit<InvoiceListItem, 'customer'> {
  return {
    uuid: row.uuid,
    invoice_number: row.invoiceNumber,
    customer_uuid: row.customerUuid,
    job_uuid: row.jobUuid,
    estimate_uuid: row.estimateUuid,
    location_uuid: row.locationUuid,
    invoice_type: row.invoiceType,
    progress_percentage: row.progressPercentage === null ? null : Number(row.progressPercentage),
    issue_date: row.issueDate,
    due_date: row.dueDate,
    subtotal: moneyOut(row.subtotal),
    tax_amount: moneyOut(row.taxAmount),
    discount_amount: moneyOut(row.discountAmount),
    total_amount: moneyOut(row.totalAmount),
    paid_amount: moneyOut(row.paidAmount),
    balance_amount: moneyOut(row.balanceAmount),
    line_items: row.lineItems,
    notes: row.notes,
    terms: row.terms,
    internal_notes: row.internalNotes,
    status: shownStatus,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    deleted_at: row.deletedAt?.toISOString() ?? null,
  };
}

/** An invoice in a list: its fields and its customer. */
export function toInvoiceListItem({ invoice, shownStatus, customer }: InvoiceListRow): InvoiceListItem {
  return {
    ...invoiceFields(invoice, shownStatus),
    customer: { uuid: customer.uuid, first_name: customer.firstName, last_name: customer.lastName },
  };
}

/** An invoice as its GET answers it: with its customer, job, estimate and location. */
export function toInvoiceResponse(row: InvoiceDetailRow): InvoiceResponse {
  const { invoice, shownStatus, customer, job, estimate, location } = row;
  return {
    ...invoiceFields(invoice, shownStatus),
    customer: { uuid: customer.uuid, first_name: customer.firstName, last_name: customer.lastName, email: customer.email },
    job: job && { uuid: job.uuid, title: job.title, status: job.status },
    estimate: estimate && { uuid: estimate.uuid, estimate_number: estimate.estimateNumber, status: estimate.status },
    location: location && { uuid: location.uuid, name: location.name },
  };
}
