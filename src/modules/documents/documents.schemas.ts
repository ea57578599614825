import { z } from 'zod';
import { emailAddress, longText, nullableString, requiredText, timestampOutput, uuidString, moneyOutput } from '../../shared/formats.js';
import { AddonSelection, EstimateStatus } from '../estimates/estimates.schemas.js';
import { InvoiceStatus } from '../invoices/invoices.schemas.js';
import { PricingType, TierName } from '../templates/templates.schemas.js';

export const ShareLink = z
  .object({
    url: z
      .string()
      .describe('Absolute link to the customer page, served without a key; `<url>/pdf` is its PDF.')
      .meta({ example: 'https://api.example.com/share/estimates/AZpMHnwrfT6fEC48TV5vcAGaTB58K309nxArPE1eb3A.1797955200.q2Xh0e6w9oZbB2m7u6h0kXrW3m1Yc8pQeLrN4tVxJ5s' }),
    expires_at: timestampOutput.describe('When the link stops working (SHARE_LINK_TTL_SECONDS after it was made).'),
  })
  .meta({ id: 'ShareLink' });
export type ShareLink = z.infer<typeof ShareLink>;

export const SendDocumentBody = z
  .strictObject({
    to: emailAddress.optional().describe("Recipient; default the customer's email (400 when neither exists).").meta({ example: 'dana@example.com' }),
    cc: z
      .array(emailAddress)
      .max(10, 'must have at most 10 addresses')
      .optional()
      .describe('Copies, at most 10.')
      .meta({ example: ['office@example.com'] }),
    message: longText(5000).optional().describe('A personal note placed above the link.').meta({ example: 'Thanks for having us out today.' }),
  })
  .describe('All fields optional; an empty body sends to the customer.')
  .meta({ id: 'SendDocumentBody' });
export type SendDocumentBody = z.infer<typeof SendDocumentBody>;

export const SentDocument = z
  .object({
    message_id: z.string().describe('The Message-ID of the email.').meta({ example: '<0b9f3b0e-1c1d-4f9a-9d61-5f2c1b8a7e31@example.com>' }),
    to: z.string().describe('The address it was sent to: the body\'s `to`, else the customer\'s email.').meta({ example: 'dana@example.com' }),
    cc: z.array(z.string()).describe('The copies, as the body gave them; empty when none.').meta({ example: ['office@example.com'] }),
    sent_at: timestampOutput.describe('When the SMTP server accepted the message.'),
    test_mode: z
      .boolean()
      .describe('true when sent with a test key: the email was made but went nowhere (the sandbox never mails anyone).')
      .meta({ example: false }),
  })
  .meta({ id: 'SentDocument' });
export type SentDocument = z.infer<typeof SentDocument>;

export const ShareTokenParams = z.strictObject({
  token: z.string().max(300).describe('The signed token of a share link.').meta({ example: 'AZpMHnwrfT6fEC48TV5vcAGaTB58K309nxArPE1eb3A.1797955200.q2Xh0e6w9oZbB2m7u6h0kXrW3m1Yc8pQeLrN4tVxJ5s' }),
});

export const AcceptEstimateBody = z
  .strictObject({
    selected_tier: TierName.nullable()
      .optional()
      .describe('good, better or best: required for a tiered template; absent or null for a flat one.')
      .meta({ example: 'better' }),
    selected_addons: AddonSelection.nullable()
      .optional()
      .describe('Ids of the template add-ons the customer wants, each at most once; absent or null means none (an unchecked form). Unknown or repeated ids are 400.')
      .meta({ example: ['permit'] }),
    signature_name: requiredText(200).describe('The name the customer signs with; required.').meta({ example: 'Dana Reyes' }),
    response_notes: longText(5000).nullable().optional().describe("The customer's note.").meta({ example: 'Please call before arriving.' }),
  })
  .meta({ id: 'AcceptEstimateBody' });
export type AcceptEstimateBody = z.infer<typeof AcceptEstimateBody>;

export const DeclineEstimateBody = z
  .strictObject({
    response_notes: longText(5000).nullable().optional().describe("The customer's reason, if any.").meta({ example: 'Going with a cheaper option.' }),
  })
  .meta({ id: 'DeclineEstimateBody' });
export type DeclineEstimateBody = z.infer<typeof DeclineEstimateBody>;

const CompanyBlock = z
  .object({
    name: z.string().meta({ example: 'Reyes Plumbing' }),
    email: z.string().meta({ example: 'office@reyesplumbing.com' }),
    phone: nullableString,
    address_lines: z.array(z.string()).describe('The company address, one line each.').meta({ example: ['100 Congress Ave', 'Austin, TX 78701'] }),
  })
  .meta({ id: 'SharedCompany' });

const CustomerBlock = z
  .object({
    name: z.string().describe('First and last name (and company name when set).').meta({ example: 'Dana Reyes' }),
    service_address_lines: z.array(z.string()).describe("The job's service address, else the customer's physical address.").meta({ example: ['12 Elm St', 'Austin, TX 78702'] }),
  })
  .meta({ id: 'SharedCustomer' });

export const CustomerEstimateView = z
  .object({
    estimate_number: nullableString.meta({ example: 'EST-0001' }),
    status: EstimateStatus,
    company: CompanyBlock,
    customer: CustomerBlock,
    template_name: z.string().meta({ example: 'Water heater install' }),
    pricing_type: PricingType,
    service_description: nullableString,
    customer_notes: nullableString,
    tiers: z
      .object({ good: moneyOutput(1000), better: moneyOutput(1500), best: moneyOutput(2250.5) })
      .nullable()
      .describe('The tier prices to choose from (tiered templates), null for flat.'),
    addons: z.array(z.object({ id: z.string(), name: z.string(), price: moneyOutput(75) })).describe('The add-ons to choose from.'),
    quantity: z.number().meta({ example: 1 }),
    selected_tier: TierName.nullable(),
    selected_addons: z.array(z.string()).nullable(),
    adjustments: z.record(z.string(), z.number()).nullable(),
    base_amount: moneyOutput(1500),
    addons_amount: moneyOutput(75),
    tax_amount: moneyOutput(0),
    total_amount: moneyOutput(1575),
    expires_at: timestampOutput.nullable(),
    responded_at: timestampOutput.nullable(),
    response_notes: nullableString,
    signature_name: nullableString.describe('The name signed with on acceptance.'),
    signed_at: timestampOutput.nullable(),
    created_at: timestampOutput,
    pdf_url: z.string().describe('The PDF of this estimate (`<url>/pdf`).'),
  })
  .describe("The customer's view of an estimate: no internal notes, ids or links to other records.")
  .meta({ id: 'CustomerEstimateView' });
export type CustomerEstimateView = z.infer<typeof CustomerEstimateView>;

export const CustomerInvoiceView = z
  .object({
    invoice_number: nullableString.meta({ example: 'INV-0001' }),
    status: InvoiceStatus,
    company: CompanyBlock,
    customer: CustomerBlock,
    issue_date: z.string().meta({ example: '2026-11-22' }),
    due_date: z.string().meta({ example: '2026-12-22' }),
    line_items: z
      .array(z.object({ description: nullableString, quantity: z.number(), unit_price: z.number(), tax_rate: z.number(), line_total: z.number(), tax_amount: z.number() }))
      .nullable(),
    subtotal: moneyOutput(1000),
    tax_amount: moneyOutput(82.5),
    discount_amount: moneyOutput(0),
    total_amount: moneyOutput(1082.5),
    paid_amount: moneyOutput(0),
    balance_amount: moneyOutput(1082.5),
    notes: nullableString,
    terms: nullableString,
    pdf_url: z.string(),
  })
  .meta({ id: 'CustomerInvoiceView' });
export type CustomerInvoiceView = z.infer<typeof CustomerInvoiceView>;

export const DocumentParams = z.strictObject({ uuid: uuidString.describe('The record id.') });
