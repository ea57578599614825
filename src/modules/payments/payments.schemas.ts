import { z } from 'zod';
import { CustomerEmbed } from '../customers/customers.schemas.js';
import { calendarDate, jsonObject, longText, moneyInput, positiveMoneyInput, nullableString, shortText, timestampInput, timestampOutput, uuidString, moneyOutput } from '../../shared/formats.js';
import { listQueryShape } from '../../shared/list-query.js';
import { InvoiceStatus } from '../invoices/invoices.schemas.js';
import { PAYMENT_STATUSES, PAYMENT_TYPES } from '../../db/schema/index.js';

export const PaymentType = z.enum(PAYMENT_TYPES).meta({ id: 'PaymentType', description: 'How the customer paid.' });
export const PaymentStatusSchema = z
  .enum(PAYMENT_STATUSES)
  .meta({ id: 'PaymentStatus', description: 'Only Completed payments count toward the invoice\'s paid_amount.' });

const positiveAmount = positiveMoneyInput
  .describe('Greater than 0, at most 2 decimals. Completed payments may not make paid_amount exceed the invoice total.')
  .meta({ example: 30 });

const detailFields = {
  payment_type: PaymentType.meta({ example: 'check' }),
  payment_method: shortText(100).nullable().optional().describe('Free text, e.g. a card brand or bank_transfer.').meta({ example: 'visa' }),
  amount: positiveAmount,
  processing_fee: moneyInput
    .optional()
    .describe('Default 0; may not exceed amount. net_amount = amount - processing_fee.')
    .meta({ example: 0.87 }),
  payment_date: calendarDate.describe('YYYY-MM-DD.'),
  transaction_id: shortText().nullable().optional().describe('Processor transaction id.').meta({ example: 'ch_3N9' }),
  reference_number: shortText().nullable().optional().describe('E.g. a check number.').meta({ example: '1042' }),
  authorization_code: shortText(100).nullable().optional().describe('For credit cards.').meta({ example: 'A1B2C3' }),
  payment_details: jsonObject.nullable().optional().describe('Free-form object.'),
  notes: longText().nullable().optional().describe('Notes.'),
  processed_at: timestampInput
    .nullable()
    .optional()
    .describe('Completed payments only; default now when the payment is or becomes Completed.'),
};

export const CreatePaymentBody = z
  .strictObject({
    invoice_uuid: uuidString.describe('A live, non-Draft invoice of the company; customer_uuid is taken from it.'),
    ...detailFields,
    status: z
      .enum(['Pending', 'Completed'])
      .optional()
      .describe('Completed (default) counts toward paid_amount at once; Pending holds nothing until completed.')
      .meta({ example: 'Completed' }),
  })
  .describe('payment_number (PAY-0001, per company), customer_uuid and net_amount are set by the service.')
  .meta({ id: 'CreatePaymentBody' });
export type CreatePaymentBody = z.infer<typeof CreatePaymentBody>;

export const UpdatePaymentBody = z
  .strictObject({
    ...detailFields,
    status: PaymentStatusSchema.optional()
      .describe(
        'Moves: Pending -> Completed (re-checks the balance; sets processed_at = now unless sent) | Failed; Completed -> Refunded (stops counting; a Paid invoice reopens). The current status is a no-op; any other move: 400 invalid_status_transition.',
      )
      .meta({ example: 'Completed' }),
  })
  .partial()
  .describe('invoice_uuid cannot change. A changed amount on a Completed payment re-checks the invoice balance.')
  .meta({ id: 'UpdatePaymentBody' });
export type UpdatePaymentBody = z.infer<typeof UpdatePaymentBody>;

export const ListPaymentsQuery = z.strictObject({
  ...listQueryShape,
  invoice_uuid: uuidString.optional().describe('Only this invoice\'s payments.'),
  customer_uuid: uuidString.optional().describe('Only this customer\'s payments.'),
  payment_type: PaymentType.optional().describe('Only payments of this type.'),
  status: PaymentStatusSchema.optional().describe('Only payments in this status.'),
});
export type ListPaymentsQuery = z.infer<typeof ListPaymentsQuery>;

const paymentFields = {
  uuid: z.string(),
  payment_number: nullableString.meta({ example: 'PAY-0001' }),
  invoice_uuid: z.string(),
  customer_uuid: z.string(),
  payment_type: PaymentType,
  payment_method: nullableString,
  amount: moneyOutput(30),
  processing_fee: moneyOutput(0.87),
  net_amount: moneyOutput(29.13),
  payment_date: z.string().meta({ format: 'date', example: '2026-11-20' }),
  transaction_id: nullableString,
  reference_number: nullableString,
  authorization_code: nullableString,
  payment_details: z.record(z.string(), z.unknown()).nullable(),
  notes: nullableString,
  status: PaymentStatusSchema,
  processed_at: timestampOutput.nullable(),
  created_by_user_id: z.string(),
  created_at: timestampOutput,
  updated_at: timestampOutput,
  deleted_at: timestampOutput.nullable(),
};

export const PaymentListItem = z
  .object({ ...paymentFields, invoice: z.object({ uuid: z.string(), invoice_number: nullableString }) })
  .meta({ id: 'PaymentListItem' });
export type PaymentListItem = z.infer<typeof PaymentListItem>;

export const PaymentResponse = z
  .object({
    ...paymentFields,
    invoice: z.object({
      uuid: z.string(),
      invoice_number: nullableString,
      total_amount: moneyOutput(100),
      balance_amount: moneyOutput(70),
      status: InvoiceStatus,
    }),
    customer: CustomerEmbed,
  })
  .meta({ id: 'Payment' });
export type PaymentResponse = z.infer<typeof PaymentResponse>;
