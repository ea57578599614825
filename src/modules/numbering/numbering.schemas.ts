import { z } from 'zod';
import { okSchema } from '../../shared/envelope.js';
import { patterned } from '../../shared/formats.js';

export const MAX_OVERRIDE = 999_999_999_999;

const KindSettingsBody = z
  .strictObject({
    prefix: patterned(/^[A-Za-z0-9\-_/.#]{0,20}$/, 20, 'must be 0-20 ASCII letters, digits or - _ / . #')
      .optional()
      .describe('0-20 ASCII letters, digits and - _ / . #')
      .meta({ example: 'INV-' }),
    padding: z
      .number()
      .int('must be an integer from 0 to 12')
      .min(0, 'must be an integer from 0 to 12')
      .max(12, 'must be an integer from 0 to 12')
      .optional()
      .describe('Zero-padding width, 0-12.')
      .meta({ example: 4 }),
    override_next_number: z
      .number()
      .int('must be a positive integer')
      .min(1, 'must be a positive integer')
      .max(MAX_OVERRIDE, 'is too large')
      .nullable()
      .optional()
      .describe('One-time override used by the next document only; null clears it. 400 when that number was already used.')
      .meta({ example: 1001 }),
  })
  .meta({ id: 'NumberingKindUpdateBody' });

export const UpdateNumberingBody = z
  .strictObject({ invoice: KindSettingsBody.optional(), estimate: KindSettingsBody.optional() })
  .meta({ id: 'UpdateNumberingBody' });
export type UpdateNumberingBody = z.infer<typeof UpdateNumberingBody>;
export type KindSettingsBody = z.infer<typeof KindSettingsBody>;

const KindSettings = z
  .object({
    prefix: z.string().meta({ example: 'INV-' }),
    padding: z.number().int().meta({ example: 4 }),
    next_number: z.number().int().describe('The number the next document gets (the override when one is set).').meta({ example: 1 }),
    next_number_formatted: z.string().meta({ example: 'INV-0001' }),
    has_override: z.boolean(),
  })
  .meta({ id: 'NumberingSettings' });
export type KindSettings = z.infer<typeof KindSettings>;

export const NumberingResponse = okSchema(z.object({ invoice: KindSettings, estimate: KindSettings }).meta({ id: 'Numbering' }));
