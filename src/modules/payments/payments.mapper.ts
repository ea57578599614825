import { moneyOut } from '../../shared/money.js';
import type { PaymentDetailRow, PaymentListRow } from './payments.repository.js';
import type { PaymentListItem, PaymentResponse } from './payments.schemas.js';

/** The payment's own fields; the field order is the JSON order (ETags hash it). */
function paymentFields(row: PaymentListRow['payment']): Omit<PaymentListItem, 'invoice'> {
  return {
    uuid: row.uuid,
    payment_number: row.paymentNumber,
    invoice_uuid: row.invoiceUuid,
    customer_uuid: row.customerUuid,
    payment_type: row.paymentType,
    payment_method: row.paymentMethod,
    amount: moneyOut(row.amount),
    processing_fee: moneyOut(row.processingFee),
    net_amount: moneyOut(row.netAmount),
    payment_date: row.paymentDate,
    transaction_id: row.transactionId,
    reference_number: row.referenceNumber,
    authorization_code: row.authorizationCode,
    payment_details: row.paymentDetails,
    notes: row.notes,
    status: row.status,
    processed_at: row.processedAt?.toISOString() ?? null,
    created_by_user_id: row.createdByUserId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    deleted_at: row.deletedAt?.toISOString() ?? null,
  };
}

/** A payment in a list: its fields and its invoice's number. */
export function toPaymentListItem({ payment, invoice }: PaymentListRow): PaymentListItem {
  return { ...paymentFields(payment), invoice: { uuid: invoice.uuid, invoice_number: invoice.invoiceNumber } };
}

/** A payment as its GET answers it: with its invoice's amounts and status, and its customer. */
export function toPaymentResponse({ payment, invoice, customer }: PaymentDetailRow): PaymentResponse {
  return {
    ...paymentFields(payment),
    invoice: {
      uuid: invoice.uuid,
      invoice_number: invoice.invoiceNumber,
      total_amount: moneyOut(invoice.totalAmount),
      balance_amount: moneyOut(invoice.balanceAmount),
      status: invoice.shownStatus,
    },
    customer: { uuid: customer.uuid, first_name: customer.firstName, last_name: customer.lastName },
  };
}
