import { z } from 'zod';
import {
  jsonObject,
  phoneNumber,
  requiredText,
  shortText,
  timestampOutput,
  timezoneName,
  usState,
  uuidString,
  zipCode,
} from '../../shared/formats.js';
import { listQueryShape } from '../../shared/list-query.js';

const fields = {
  name: requiredText().describe('Location name.').meta({ example: 'Austin HQ' }),
  location_code: shortText(50).nullable().optional().describe('Internal code.').meta({ example: 'ATX-1' }),
  address1: requiredText().describe('Street address.').meta({ example: '100 Congress Ave' }),
  address2: shortText().nullable().optional().describe('Suite, unit.').meta({ example: 'Suite 200' }),
  city: requiredText(100).describe('City.').meta({ example: 'Austin' }),
  state: usState.describe('2-letter US state code, upper case.'),
  zip: zipCode.describe('12345, 12345-6789 or 123456789.'),
  phone: phoneNumber.nullable().optional().describe('xxx-xxx-xxxx.'),
  timezone: timezoneName.optional().describe('IANA time zone; default America/New_York.'),
  business_hours: jsonObject.nullable().optional().describe('Free-form object.'),
  default_tax_rules: jsonObject.nullable().optional().describe('Free-form object.'),
  service_types_offered: jsonObject.nullable().optional().describe('Free-form object.'),
  default_pricing_set_uuid: uuidString.nullable().optional().describe('Pricing set id.'),
  is_primary: z
    .boolean()
    .optional()
    .describe('At most one location is primary; making one primary makes the previous one non-primary.'),
};

export const CreateLocationBody = z
  .strictObject({
    ...fields,
    // SPEC: "a newly created location is active"; true is accepted as saying so, false is 400.
    is_active: z
      .literal(true, { error: 'must be true or absent: a new location is active (deactivate it with an update)' })
      .optional()
      .describe('A new location is active: true or absent.'),
  })
  .meta({ id: 'CreateLocationBody' });
export type CreateLocationBody = z.infer<typeof CreateLocationBody>;

export const UpdateLocationBody = z
  .strictObject({ ...fields, is_active: z.boolean().optional().describe('Whether the location is active.') })
  .partial()
  .meta({ id: 'UpdateLocationBody' });
export type UpdateLocationBody = z.infer<typeof UpdateLocationBody>;

export const ListLocationsQuery = z.strictObject({ ...listQueryShape });
export type ListLocationsQuery = z.infer<typeof ListLocationsQuery>;

export const LocationResponse = z
  .object({
    uuid: z.string(),
    name: z.string(),
    location_code: z.string().nullable(),
    address1: z.string(),
    address2: z.string().nullable(),
    city: z.string(),
    state: z.string(),
    zip: z.string(),
    phone: z.string().nullable(),
    timezone: z.string(),
    business_hours: z.record(z.string(), z.unknown()).nullable(),
    default_tax_rules: z.record(z.string(), z.unknown()).nullable(),
    service_types_offered: z.record(z.string(), z.unknown()).nullable(),
    default_pricing_set_uuid: z.string().nullable(),
    is_primary: z.boolean(),
    is_active: z.boolean(),
    created_at: timestampOutput,
    updated_at: timestampOutput,
    deleted_at: timestampOutput.nullable(),
  })
  .meta({ id: 'Location' });
export type LocationResponse = z.infer<typeof LocationResponse>;
