import { z } from 'zod';
import {
  emailAddress,
  jsonObject,
  longText,
  nullableString,
  phoneNumber,
  requiredText,
  shortText,
  timestampOutput,
  usState,
  uuidString,
  zipCode,
} from '../../shared/formats.js';
import { listQueryShape, searchQuery } from '../../shared/list-query.js';

const address = (kind: 'physical' | 'billing') => ({
  [`${kind}_address1`]: shortText().nullable().optional().describe(`${kind} street address.`),
  [`${kind}_address2`]: shortText().nullable().optional().describe(`${kind} suite, unit.`),
  [`${kind}_city`]: shortText(100).nullable().optional().describe(`${kind} city.`),
  [`${kind}_state`]: usState.nullable().optional().describe(`${kind} state, 2-letter US code.`),
  [`${kind}_zip`]: zipCode.nullable().optional().describe(`${kind} ZIP.`),
}) as Record<`${typeof kind}_${'address1' | 'address2' | 'city'}`, z.ZodOptional<z.ZodNullable<z.ZodString>>> &
  Record<`${typeof kind}_state`, z.ZodOptional<z.ZodNullable<typeof usState>>> &
  Record<`${typeof kind}_zip`, z.ZodOptional<z.ZodNullable<typeof zipCode>>>;

export const CUSTOMER_TYPES = ['Residential', 'Commercial'] as const;
export const NOTIFY_CHANNELS = ['email', 'sms', 'both'] as const;

export const CustomerType = z.enum(CUSTOMER_TYPES).meta({ id: 'CustomerType', description: 'Residential or Commercial.' });
export const NotifyChannel = z
  .enum(NOTIFY_CHANNELS)
  .meta({ id: 'NotifyChannel', description: 'How the customer hears that the technician is on the way.' });

const fields = {
  first_name: requiredText(100).describe('First name.').meta({ example: 'Dana' }),
  last_name: requiredText(100).describe('Last name.').meta({ example: 'Reyes' }),
  company_name: shortText().nullable().optional().describe('For commercial customers.').meta({ example: 'Reyes Dental' }),
  email: emailAddress.nullable().optional().describe('Email address.'),
  phone: phoneNumber.nullable().optional().describe('xxx-xxx-xxxx.'),
  customer_type: CustomerType.optional().describe('Default Residential.'),
  is_vip: z.boolean().optional().describe('Default false.'),
  ...address('physical'),
  ...address('billing'),
  primary_service_location_uuid: uuidString.nullable().optional().describe('A location of the company.'),
  notes: longText().nullable().optional().describe('Internal notes.'),
  internal_flags: jsonObject.nullable().optional().describe('Free-form object.'),
  on_my_way_notify_via: NotifyChannel.nullable().optional().describe('email, sms, both or null.'),
};

export const CreateCustomerBody = z.strictObject(fields).meta({ id: 'CreateCustomerBody' });
export type CreateCustomerBody = z.infer<typeof CreateCustomerBody>;

export const UpdateCustomerBody = z.strictObject(fields).partial().meta({ id: 'UpdateCustomerBody' });
export type UpdateCustomerBody = z.infer<typeof UpdateCustomerBody>;

export const ListCustomersQuery = z.strictObject({
  ...listQueryShape,
  filter: z.enum(['all', 'residential', 'commercial', 'vip']).default('all').describe('all, residential, commercial or vip.'),
  search: searchQuery.describe('Matches first_name, last_name, "first last", company_name, email, phone and the uuid.'),
});
export type ListCustomersQuery = z.infer<typeof ListCustomersQuery>;

export const CustomerResponse = z
  .object({
    uuid: z.string(),
    first_name: z.string(),
    last_name: z.string(),
    company_name: nullableString,
    email: nullableString,
    phone: nullableString,
    customer_type: CustomerType,
    is_vip: z.boolean(),
    physical_address1: nullableString,
    physical_address2: nullableString,
    physical_city: nullableString,
    physical_state: nullableString,
    physical_zip: nullableString,
    billing_address1: nullableString,
    billing_address2: nullableString,
    billing_city: nullableString,
    billing_state: nullableString,
    billing_zip: nullableString,
    primary_service_location_uuid: nullableString,
    notes: nullableString,
    internal_flags: z.record(z.string(), z.unknown()).nullable(),
    on_my_way_notify_via: NotifyChannel.nullable(),
    created_at: timestampOutput,
    updated_at: timestampOutput,
    deleted_at: timestampOutput.nullable(),
  })
  .meta({ id: 'Customer' });
export type CustomerResponse = z.infer<typeof CustomerResponse>;

/** The customer embedded in listed estimates, invoices and payments. */
export const CustomerEmbed = CustomerResponse.pick({ uuid: true, first_name: true, last_name: true });
