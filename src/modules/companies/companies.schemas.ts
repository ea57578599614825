import { z } from 'zod';
import { nullableString } from '../../shared/formats.js';

export const CompanyResponse = z
  .object({
    uuid: z.string(),
    name: z.string(),
    email: z.string(),
    phone: nullableString,
    address_line_1: nullableString,
    address_line_2: nullableString,
    city: nullableString,
    state: nullableString.describe('State or province.'),
    postal_code: nullableString,
    country: nullableString.describe('Country code.'),
  })
  .meta({ id: 'Company' });
export type CompanyResponse = z.infer<typeof CompanyResponse>;
