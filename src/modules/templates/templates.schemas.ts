import { z } from 'zod';
import { longText, moneyInput, percentInput, queryBoolean, requiredText, timestampOutput } from '../../shared/formats.js';
import { listQueryShape } from '../../shared/list-query.js';
import { PRICING_TYPES, TIERS } from '../../db/schema/index.js';

export const PricingType = z
  .enum(PRICING_TYPES)
  .meta({ id: 'PricingType', description: 'flat: one base_price. tiered: a good, better and best price to choose from.' });
export const TierName = z.enum(TIERS).meta({ id: 'Tier', description: 'A tier of a tiered template.' });

const MAX_ADDONS = 100;

export const TiersInput = z
  .strictObject({
    good: moneyInput.describe('Price of the good tier.').meta({ example: 199 }),
    better: moneyInput.describe('Price of the better tier.').meta({ example: 299 }),
    best: moneyInput.describe('Price of the best tier.').meta({ example: 449 }),
  })
  .describe('Tier prices; all three are required for a tiered template.');
export type TiersInput = z.infer<typeof TiersInput>;

export const AddonInput = z.strictObject({
  id: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .describe('Identifier of the add-on, unique within the template; estimates select add-ons by it.')
    .meta({ example: 'filter' }),
  name: requiredText().describe('Name shown to the customer.').meta({ example: 'Replacement filter' }),
  price: moneyInput.describe('Price of the add-on, charged once per estimate (not multiplied by quantity).').meta({ example: 35 }),
});
export type AddonInput = z.infer<typeof AddonInput>;

const AddonsInput = z
  .array(AddonInput)
  .max(MAX_ADDONS, `must have at most ${MAX_ADDONS} add-ons`)
  .superRefine((addons, context) => {
    const seen = new Set<string>();
    addons.forEach((addon, index) => {
      if (seen.has(addon.id)) {
        context.addIssue({ code: 'custom', path: [index, 'id'], message: 'must be unique within the template' });
      }
      seen.add(addon.id);
    });
  })
  .describe('Optional extras: [{id, name, price}]; id must be unique within the template. The list is replaced as a whole on update.');

const fields = {
  name: requiredText().describe('Template name; copied to estimates created from it.').meta({ example: 'AC tune-up' }),
  description: longText().nullable().optional().describe('What the service covers.').meta({ example: 'Seasonal inspection and cleaning.' }),
  pricing_type: PricingType.describe('flat: one base_price (required). tiered: tiers good/better/best (all required); estimates pick one with selected_tier.'),
  base_price: moneyInput.nullable().optional().describe('Unit price of a flat template; required when pricing_type is flat.').meta({ example: 129.99 }),
  tiers: TiersInput.nullable().optional(),
  addons: AddonsInput.optional(),
  tax_rate: percentInput.optional().describe('Tax rate in percent (0-100, up to 4 decimals) applied to base + add-ons; default 0.'),
  is_active: z.boolean().optional().describe('Default true. Informational (e.g. for pickers); an inactive template can still be priced.'),
};

const CROSS_FIELD_RULES =
  'A flat template needs base_price; a tiered one needs tiers with good, better and best. ' +
  'Add-on ids are unique within the template. On update these rules are checked against the record as it will be stored.';

export const CreateTemplateBody = z.strictObject(fields).describe(CROSS_FIELD_RULES).meta({ id: 'CreateTemplateBody' });
export type CreateTemplateBody = z.infer<typeof CreateTemplateBody>;

export const UpdateTemplateBody = z.strictObject(fields).partial().describe(CROSS_FIELD_RULES).meta({ id: 'UpdateTemplateBody' });
export type UpdateTemplateBody = z.infer<typeof UpdateTemplateBody>;

export const ListTemplatesQuery = z.strictObject({
  ...listQueryShape,
  pricing_type: PricingType.optional().describe('Only templates of this pricing type.'),
  is_active: queryBoolean.optional().describe('Only active (true) or inactive (false) templates.'),
});
export type ListTemplatesQuery = z.infer<typeof ListTemplatesQuery>;

export const TemplateResponse = z
  .object({
    uuid: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    pricing_type: PricingType,
    base_price: z.number().nullable().meta({ example: 129.99 }),
    tiers: z.object({ good: z.number(), better: z.number(), best: z.number() }).nullable(),
    addons: z.array(z.object({ id: z.string(), name: z.string(), price: z.number() })),
    tax_rate: z.number().meta({ example: 8.25 }),
    is_active: z.boolean(),
    created_at: timestampOutput,
    updated_at: timestampOutput,
    deleted_at: timestampOutput.nullable(),
  })
  .meta({ id: 'Template' });
export type TemplateResponse = z.infer<typeof TemplateResponse>;
