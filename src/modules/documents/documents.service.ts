import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { AppError, invalidField, notFound } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { UrlSigner } from '../../storage/url-signer.js';
import { getCompany } from '../companies/companies.service.js';
import { customersService } from '../customers/customers.service.js';
import type { CustomerResponse } from '../customers/customers.schemas.js';
import { estimatesService, updateEstimateWithAnswer } from '../estimates/estimates.service.js';
import type { EstimateResponse, UpdateEstimateBody } from '../estimates/estimates.schemas.js';
import { lockInvoice } from '../invoices/invoice-settlement.js';
import { invoicesService } from '../invoices/invoices.service.js';
import type { InvoiceResponse } from '../invoices/invoices.schemas.js';
import { lockJob } from '../jobs/jobs.repository.js';
import { jobsService } from '../jobs/jobs.service.js';
import type { JobResponse } from '../jobs/jobs.schemas.js';
import { findTemplate } from '../templates/templates.repository.js';
import type { TemplateResponse } from '../templates/templates.schemas.js';
import { toTemplateResponse } from '../templates/templates.mapper.js';
import { addressLines, cityLine } from './document-format.js';
import { findEstimateSignature } from './documents.repository.js';
import type {
  AcceptEstimateBody,
  CustomerEstimateView,
  DeclineEstimateBody,
  SendDocumentBody,
  SentDocument,
  ShareLink,
} from './documents.schemas.js';
import { sendDocumentEmail } from './document-mail.js';
import { renderDocumentPdf } from './document-pdf.js';
import { openShareToken, shareToken, sharePath, type DocumentKind, type SharedRecord } from './share-links.js';

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

interface DocumentParties {
  company: CompanyBlock;
  customer: CustomerBlock;
  customerEmail: string | null;
  /** Where a share link and its PDF point; set once a link exists. */
  shareUrl?: string;
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

/** What the share routes need to make and read links. */
export interface LinkContext {
  signer: UrlSigner;
  config: Pick<Config, 'SHARE_LINK_TTL_SECONDS'>;
  baseUrl: string;
}

/** Statuses from which sending an estimate moves its job to Estimate Sent. */
const JOB_STATUSES_BEFORE_ESTIMATE: ReadonlySet<string> = new Set(['New', 'Contacted', 'Scheduled']);

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

async function parties(db: Db, companyId: string, customerUuid: string, jobUuid: string | null): Promise<DocumentParties> {
  const company = await getCompany(db, companyId);
  // A document keeps showing its customer and job after they are deleted.
  const customer = await customersService.get(db, companyId, customerUuid, true);
  const job = jobUuid ? await jobsService.get(db, companyId, jobUuid, true) : null;
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

/** The current record with everything its PDF, page and email show; 404 for a missing or deleted one. */
export async function loadDocument(db: Db, kind: DocumentKind, record: SharedRecord): Promise<CustomerDocument> {
  const { companyId, uuid } = record;
  if (kind === 'estimate') {
    const estimate = await estimatesService.get(db, companyId, uuid, false);
    const template = await findTemplate(db, companyId, estimate.template.uuid, true);
    if (!template) throw notFound('Estimate');
    return {
      kind,
      ...(await parties(db, companyId, estimate.customer.uuid, estimate.job?.uuid ?? null)),
      estimate,
      template: toTemplateResponse(template),
      signature: await findEstimateSignature(db, companyId, uuid),
    };
  }
  const invoice = await invoicesService.get(db, companyId, uuid, false);
  return {
    kind,
    ...(await parties(db, companyId, invoice.customer.uuid, invoice.job?.uuid ?? null)),
    invoice,
    jobTitle: invoice.job?.title ?? null,
  };
}

export async function documentPdf(db: Db, kind: DocumentKind, record: SharedRecord): Promise<{ pdf: Buffer; filename: string }> {
  const document = await loadDocument(db, kind, record);
  return { pdf: await renderDocumentPdf(document), filename: pdfFilename(document) };
}

export function documentNumber(document: CustomerDocument): string {
  const number = document.kind === 'estimate' ? document.estimate.estimate_number : document.invoice.invoice_number;
  return number ?? (document.kind === 'estimate' ? document.estimate.uuid : document.invoice.uuid);
}

export function pdfFilename(document: CustomerDocument): string {
  return `${document.kind === 'estimate' ? 'Estimate' : 'Invoice'}-${documentNumber(document).replace(/[^\w.-]+/g, '_')}.pdf`;
}

function makeShareLink(links: LinkContext, kind: DocumentKind, record: SharedRecord): ShareLink {
  const { token, expires } = shareToken(links.signer, kind, record, links.config.SHARE_LINK_TTL_SECONDS);
  return { url: `${links.baseUrl}${sharePath(kind, token)}`, expires_at: new Date(expires * 1000).toISOString() };
}

/** A share link of a live record of the company (404 otherwise). */
export async function createShareLink(db: Db, links: LinkContext, kind: DocumentKind, record: SharedRecord): Promise<ShareLink> {
  await loadDocument(db, kind, record);
  return makeShareLink(links, kind, record);
}

/** The record a share token opens and its document: 404 for a malformed, tampered, expired or deleted one. */
async function openShared(db: Db, signer: UrlSigner, kind: DocumentKind, token: string) {
  const record = openShareToken(signer, kind, token);
  if (!record) throw notFound(kind === 'estimate' ? 'Estimate' : 'Invoice');
  return { record, document: await loadDocument(db, kind, record) };
}

export async function openSharedDocument(db: Db, signer: UrlSigner, kind: DocumentKind, token: string): Promise<CustomerDocument> {
  return (await openShared(db, signer, kind, token)).document;
}

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

/** The share page acts as the user who made the estimate, in the estimate's company. */
function estimateActor(document: EstimateDocument, companyId: string): Actor {
  return { companyId, userId: document.estimate.created_by_user_id };
}

/**
 * The customer accepts: the estimate is re-priced with the chosen tier and add-ons and moved to
 * Accepted through the estimates update path (its status rules, pricing and change recording), which
 * first requires it to be Pending under the row lock.
 */
export async function acceptEstimate(db: Db, signer: UrlSigner, token: string, body: AcceptEstimateBody): Promise<EstimateDocument> {
  const { record, document } = await openShared(db, signer, 'estimate', token);
  const update: UpdateEstimateBody = {
    status: 'Accepted',
    selected_tier: body.selected_tier ?? null,
    selected_addons: body.selected_addons ?? [],
    ...(body.response_notes !== undefined ? { response_notes: body.response_notes } : {}),
  };
  await updateEstimateWithAnswer(db, estimateActor(document as EstimateDocument, record.companyId), record.uuid, update, {
    requireStatus: 'Pending',
    signature: { signatureName: body.signature_name.trim(), signedAt: new Date() },
  });
  return (await loadDocument(db, 'estimate', record)) as EstimateDocument;
}

export async function declineEstimate(db: Db, signer: UrlSigner, token: string, body: DeclineEstimateBody): Promise<EstimateDocument> {
  const { record, document } = await openShared(db, signer, 'estimate', token);
  const update: UpdateEstimateBody = {
    status: 'Declined',
    ...(body.response_notes !== undefined ? { response_notes: body.response_notes } : {}),
  };
  await updateEstimateWithAnswer(db, estimateActor(document as EstimateDocument, record.companyId), record.uuid, update, { requireStatus: 'Pending' });
  return (await loadDocument(db, 'estimate', record)) as EstimateDocument;
}

/**
 * Emails the document: share link in the text and HTML parts, the PDF attached, Reply-To the company.
 * The status moves (the estimate's job to Estimate Sent, a Draft invoice to Pending) happen only after
 * the SMTP server accepted the message, in one transaction; a failed send changes nothing.
 */
export async function sendDocument(
  db: Db,
  config: Pick<Config, 'SMTP_URL' | 'MAIL_FROM'>,
  links: LinkContext,
  kind: DocumentKind,
  actor: Actor,
  uuid: string,
  body: SendDocumentBody,
): Promise<SentDocument> {
  const record = { companyId: actor.companyId, uuid };
  const document = await loadDocument(db, kind, record);
  const to = body.to ?? document.customerEmail;
  if (!to) throw invalidField('to', "is required: the customer has no email address");
  if (!config.SMTP_URL) throw new AppError('service_unavailable', 'Email is not configured on this server (SMTP_URL).');

  const link = makeShareLink(links, kind, record);
  document.shareUrl = link.url;
  const pdf = await renderDocumentPdf(document);
  const sent = await sendDocumentEmail(config, document, {
    to,
    cc: body.cc ?? [],
    message: body.message ?? null,
    link,
    pdf,
    filename: pdfFilename(document),
  });

  await db.transaction(async (tx) => {
    if (document.kind === 'estimate') {
      const jobUuid = document.estimate.job?.uuid;
      const job = jobUuid ? await lockJob(tx, actor.companyId, jobUuid) : null;
      if (job && JOB_STATUSES_BEFORE_ESTIMATE.has(job.status)) {
        await jobsService.update(tx, actor, job.uuid, { status: 'Estimate Sent' });
      }
    } else {
      const invoice = await lockInvoice(tx, actor.companyId, uuid);
      if (invoice?.status === 'Draft') await invoicesService.update(tx, actor, uuid, { status: 'Pending' });
    }
  });
  return { message_id: sent.messageId, to: [to, ...(body.cc ?? [])], sent_at: sent.sentAt.toISOString() };
}
