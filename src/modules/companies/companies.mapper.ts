import type { CompanyRow } from './companies.repository.js';
import type { CompanyResponse } from './companies.schemas.js';

/** The company as the API answers it: add-ons, the request limit and timestamps stay internal. */
export function toCompanyResponse(row: CompanyRow): CompanyResponse {
  return {
    uuid: row.uuid,
    name: row.name,
    email: row.email,
    phone: row.phone,
    address_line_1: row.addressLine1,
    address_line_2: row.addressLine2,
    city: row.city,
    state: row.state,
    postal_code: row.postalCode,
    country: row.country,
  };
}
