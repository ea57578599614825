import { z } from 'zod';
import { CustomerEmbed } from '../customers/customers.schemas.js';
import { longText, moneyInput, nullableString, quantityInput, timestampInput, timestampOutput, uuidString, moneyOutput } from '../../shared/formats.js';
import { listQueryShape, searchQuery } from '../../shared/list-query.js';
import { ESTIMATE_STATUSES } from '../../db/schema/index.js';
import { PricingType, TierName } from '../templates/templates.schemas.js';

export const EstimateStatus = z
  .enum(ESTIMATE_STATUSES)
  .meta({ id: 'EstimateStatus', description: 'Pending until the customer (or the company) answers: Accepted, Declined or Expired.' });

export const ARITHMETIC =
  'Amounts (integer cents inside, each step rounded half away from zero to cents): ' +
  'base_amount = unit price x quantity, where the unit price is the selected tier of a tiered template or base_price of a flat one; ' +
  'addons_amount = sum of the selected add-ons\' prices (not multiplied by quantity); ' +
  'tax_amount = (base_amount + addons_amount) x template tax_rate / 100, using adjusted values; ' +
  'total_amount = base_amount + addons_amount + tax_amount. ' +
  'adjustments.base_amount, adjustments.addons_amount and adjustments.tax_amount replace the computed value.';

const selectedTier = TierName.nullable()
  .optional()
  .describe('good, better or best. Required for a tiered template; a flat template has no tiers, so it must be absent or null (400 otherwise).');

const quantity = quantityInput.optional().describe('Multiplies the unit price; > 0 with up to 3 decimals; default 1.').meta({ example: 1.5 });

/** Add-on ids as a client chooses them, each at most once: one rule for the API and the share page's accept. */
export const AddonSelection = z
  .array(z.string().min(1).max(100))
  .max(100, 'must have at most 100 add-ons')
  .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an add-on');

const selectedAddons = AddonSelection.nullable()
  .optional()
  .describe('Ids of the template\'s add-ons, each at most once; an unknown id is 400. Each add-on is charged once, whatever the quantity.')
  .meta({ example: ['filter'] });

export const AdjustmentsInput = z
  .strictObject({
    base_amount: moneyInput.optional().describe('Replaces the computed base_amount.').meta({ example: 180 }),
    addons_amount: moneyInput.optional().describe('Replaces the computed addons_amount.').meta({ example: 20 }),
    tax_amount: moneyInput.optional().describe('Replaces the computed tax_amount.').meta({ example: 0 }),
  })
  .describe('Manual amounts replacing computed ones; only base_amount, addons_amount and tax_amount are accepted.');
export type AdjustmentsInput = z.infer<typeof AdjustmentsInput>;

const pricingFields = {
  selected_tier: selectedTier,
  quantity,
  selected_addons: selectedAddons,
  adjustments: AdjustmentsInput.nullable().optional(),
};

const textFields = {
  service_description: longText().nullable().optional().describe('What will be done; searchable.').meta({ example: 'Replace condenser fan motor' }),
  internal_notes: longText().nullable().optional().describe('Staff-only notes.'),
  customer_notes: longText().nullable().optional().describe('Customer-facing notes.'),
  expires_at: timestampInput.nullable().optional().describe('When the offer lapses (ISO 8601 with Z or an offset).'),
};

const references = {
  job_uuid: uuidString
    .nullable()
    .optional()
    .describe("A live job of the company, and one of the estimate's customer (one customer per document): 400 invalid_reference otherwise, naming customer_uuid on create and job_uuid on update."),
  location_uuid: uuidString.nullable().optional().describe('A live location of the company.'),
};

export const CreateEstimateBody = z
  .strictObject({
    customer_uuid: uuidString.describe('A live customer of the company, the customer of job_uuid when it is given; cannot change later (read_only).'),
    template_uuid: uuidString.describe('A live template of the company; its name and pricing_type are copied. Cannot change later.'),
    ...references,
    ...pricingFields,
    ...textFields,
  })
  .describe(`Creates a Pending estimate numbered from the estimate numbering settings (estimate_number cannot be supplied). ${ARITHMETIC}`)
  .meta({ id: 'CreateEstimateBody' });
export type CreateEstimateBody = z.infer<typeof CreateEstimateBody>;

export const UpdateEstimateBody = z
  .strictObject({
    status: EstimateStatus.optional()
      .describe(
        'Pending -> Accepted | Declined | Expired; nothing else (400 invalid_status_transition). The current status is a no-op. ' +
          'Accepted and Declined set responded_at; Expired leaves it null.',
      ),
    response_notes: longText().nullable().optional().describe('The customer\'s response.').meta({ example: 'Approved by phone' }),
    ...references,
    ...pricingFields,
    ...textFields,
  })
  .describe(
    'Partial update of: status, response_notes, selected_tier, quantity, selected_addons, adjustments, service_description, ' +
      'internal_notes, customer_notes, expires_at, job_uuid, location_uuid. customer_uuid and template_uuid cannot change (400 read_only); a new job_uuid must be a job of the estimate\'s customer. ' +
      'When a pricing field (selected_tier, quantity, selected_addons, adjustments) is sent, the amounts are recomputed from the ' +
      'template\'s current prices with the merged inputs; other updates keep the amounts. ' +
      ARITHMETIC,
  )
  .meta({ id: 'UpdateEstimateBody' });
export type UpdateEstimateBody = z.infer<typeof UpdateEstimateBody>;

/** The create's body with customer_uuid optional: one input, the same numbers (see PreviewInvoiceBody). */
export const PreviewEstimateBody = CreateEstimateBody.partial({ customer_uuid: true })
  .describe(
    `Dry run: computes the amounts create would store; nothing is written. The create body is accepted as it is (customer_uuid optional); only template_uuid and the pricing fields count, the others are validated and ignored. The ids it names are checked as create checks them: each a live record of the company, the job the customer's (400 otherwise). ${ARITHMETIC}`,
  )
  .meta({ id: 'PreviewEstimateBody' });
export type PreviewEstimateBody = z.infer<typeof PreviewEstimateBody>;

export const ListEstimatesQuery = z.strictObject({
  ...listQueryShape,
  status: EstimateStatus.optional().describe('Only estimates in this status.'),
  customer_uuid: uuidString.optional().describe('Only estimates of this customer.'),
  job_uuid: uuidString.optional().describe('Only estimates of this job.'),
  search: searchQuery.describe('Case-insensitive substring of estimate_number, template_name or service_description.'),
});
export type ListEstimatesQuery = z.infer<typeof ListEstimatesQuery>;

const EmbeddedJob = z.object({ uuid: z.string(), title: z.string(), status: z.string() });
const EmbeddedTemplate = z.object({ uuid: z.string(), name: z.string(), pricing_type: PricingType });
const EmbeddedLocation = z.object({ uuid: z.string(), name: z.string() });

const AdjustmentsOutput = z.object({ base_amount: z.number().optional(), addons_amount: z.number().optional(), tax_amount: z.number().optional() });

const estimateFields = {
  uuid: z.string(),
  estimate_number: nullableString.meta({ example: 'EST-0001' }),
  customer_uuid: z.string(),
  job_uuid: nullableString,
  template_uuid: z.string(),
  location_uuid: nullableString,
  created_by_user_id: z.string(),
  status: EstimateStatus,
  template_name: z.string(),
  pricing_type: PricingType,
  selected_tier: TierName.nullable(),
  base_amount: moneyOutput(299),
  addons_amount: moneyOutput(35),
  tax_amount: moneyOutput(27.56),
  total_amount: moneyOutput(361.56),
  quantity: z.number().meta({ example: 1 }),
  selected_addons: z.array(z.string()).nullable(),
  adjustments: AdjustmentsOutput.nullable(),
  service_description: nullableString,
  internal_notes: nullableString,
  customer_notes: nullableString,
  response_notes: nullableString,
  expires_at: timestampOutput.nullable(),
  responded_at: timestampOutput.nullable(),
  created_at: timestampOutput,
  updated_at: timestampOutput,
  deleted_at: timestampOutput.nullable(),
  customer: CustomerEmbed,
};

export const EstimateListItem = z.object(estimateFields).meta({ id: 'EstimateListItem' });
export type EstimateListItem = z.infer<typeof EstimateListItem>;

export const EstimateResponse = z
  .object({
    ...estimateFields,
    job: EmbeddedJob.nullable(),
    template: EmbeddedTemplate,
    location: EmbeddedLocation.nullable(),
  })
  .meta({ id: 'Estimate' });
export type EstimateResponse = z.infer<typeof EstimateResponse>;

const AmountsOutput = z.object({
  base_amount: moneyOutput(299),
  addons_amount: moneyOutput(35),
  tax_amount: moneyOutput(27.56),
  total_amount: moneyOutput(361.56),
});

export const EstimatePreview = z
  .object({
    preview: AmountsOutput.describe('What create would store.'),
    breakdown: z.object({
      base_amount: moneyOutput(299).describe('unit_price x quantity before any adjustment.'),
      unit_price: moneyOutput(299).describe('The selected tier price or base_price.'),
      quantity: z.number().meta({ example: 1 }),
      tax_rate: z.number().meta({ example: 8.25 }).describe('The template\'s tax rate in percent.'),
      addons: z.array(z.object({ id: z.string(), name: z.string(), price: moneyOutput(35) })).describe('The selected add-ons.'),
      adjustments: AdjustmentsOutput.describe('The adjustments given, {} when none.'),
    }),
  })
  .meta({ id: 'EstimatePreview' });
export type EstimatePreview = z.infer<typeof EstimatePreview>;
