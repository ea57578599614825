import type { CompanyResponse } from '../companies/companies.schemas.js';
import type { CustomerResponse } from '../customers/customers.schemas.js';
import type { EstimateResponse } from '../estimates/estimates.schemas.js';
import type { InvoiceResponse } from '../invoices/invoices.schemas.js';
import type { JobResponse } from '../jobs/jobs.schemas.js';
import type { TemplateResponse } from '../templates/templates.schemas.js';
import { addressLines, cityLine } from './document-format.js';
import type { CustomerEstimateView } from './documents.schemas.js';

/**
 * The view model of a customer document: everything its PDF, its share page and its email show, built from
 * the records by the functions below. Plain data only, so it also crosses to the render processes.
 */

export interface CompanyBlock {
  name: string;
  email: string;
  phone: string | null;
  address_lines: string[];
}

export interface CustomerBlock {
  name: string;
  service_address_lines: string[];
}

export interface DocumentParties {
  company: CompanyBlock;
  customer: CustomerBlock;
  customerEmail: string | null;
}

export interface EstimateDocument extends DocumentParties {
  kind: 'estimate';
  estimate: EstimateResponse;
  template: TemplateResponse;
  signature: { name: string; signedAt: Date | null } | null;
}

export interface InvoiceDocument extends DocumentParties {
  kind: 'invoice';
  invoice: InvoiceResponse;
  jobTitle: string | null;
}

export type CustomerDocument = EstimateDocument | InvoiceDocument;

function customerName(customer: CustomerResponse): string {
  const person = `${customer.first_name} ${customer.last_name}`.trim();
  return customer.company_name ? `${person} (${customer.company_name})` : person;
}

/** The job's service address when it has one, else the customer's physical address. */
function serviceAddress(customer: CustomerResponse, job: JobResponse | null): string[] {
  if (job?.service_address1) {
    return addressLines(job.service_address1, job.service_address2, cityLine(job.service_city, job.service_state, job.service_zip));
  }
  return addressLines(
    customer.physical_address1,
    customer.physical_address2,
    cityLine(customer.physical_city, customer.physical_state, customer.physical_zip),
  );
}

/** The company, the customer and where the work is, as every document shows them. */
export function documentParties(company: CompanyResponse, customer: CustomerResponse, job: JobResponse | null): DocumentParties {
  return {
    company: {
      name: company.name,
      email: company.email,
      phone: company.phone,
      address_lines: addressLines(
        company.address_line_1,
        company.address_line_2,
        cityLine(company.city, company.state, company.postal_code),
        company.country && company.country !== 'US' ? company.country : null,
      ),
    },
    customer: { name: customerName(customer), service_address_lines: serviceAddress(customer, job) },
    customerEmail: customer.email,
  };
}

export function estimateDocument(
  parties: DocumentParties,
  estimate: EstimateResponse,
  template: TemplateResponse,
  signature: EstimateDocument['signature'],
): EstimateDocument {
  return { kind: 'estimate', ...parties, estimate, template, signature };
}

export function invoiceDocument(parties: DocumentParties, invoice: InvoiceResponse): InvoiceDocument {
  return { kind: 'invoice', ...parties, invoice, jobTitle: invoice.job?.title ?? null };
}

export function documentNumber(document: CustomerDocument): string {
  const number = document.kind === 'estimate' ? document.estimate.estimate_number : document.invoice.invoice_number;
  return number ?? (document.kind === 'estimate' ? document.estimate.uuid : document.invoice.uuid);
}

export function pdfFilename(document: CustomerDocument): string {
  return `${document.kind === 'estimate' ? 'Estimate' : 'Invoice'}-${documentNumber(document).replace(/[^\w.-]+/g, '_')}.pdf`;
}

/** What the customer sees of an estimate in JSON (the share accept and decline answers). */
export function estimateView(document: EstimateDocument, pageUrl: string): CustomerEstimateView {
  const { estimate, template, signature } = document;
  return {
    estimate_number: estimate.estimate_number,
    status: estimate.status,
    company: document.company,
    customer: document.customer,
    template_name: estimate.template_name,
    pricing_type: estimate.pricing_type,
    service_description: estimate.service_description,
    customer_notes: estimate.customer_notes,
    tiers: estimate.pricing_type === 'tiered' ? template.tiers : null,
    addons: template.addons,
    quantity: estimate.quantity,
    selected_tier: estimate.selected_tier,
    selected_addons: estimate.selected_addons,
    adjustments: estimate.adjustments,
    base_amount: estimate.base_amount,
    addons_amount: estimate.addons_amount,
    tax_amount: estimate.tax_amount,
    total_amount: estimate.total_amount,
    expires_at: estimate.expires_at,
    responded_at: estimate.responded_at,
    response_notes: estimate.response_notes,
    signature_name: signature?.name ?? null,
    signed_at: signature?.signedAt?.toISOString() ?? null,
    created_at: estimate.created_at,
    pdf_url: `${pageUrl}/pdf`,
  } as CustomerEstimateView;
}
