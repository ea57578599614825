import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { AppError, invalidField, notFound } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { UrlSigner } from '../../storage/url-signer.js';
import { getCompany } from '../companies/companies.service.js';
import { customersService } from '../customers/customers.service.js';
import { estimatesService, updateEstimateWithAnswer } from '../estimates/estimates.service.js';
import type { UpdateEstimateBody } from '../estimates/estimates.schemas.js';
import { lockInvoice } from '../invoices/invoice-settlement.js';
import { invoicesService } from '../invoices/invoices.service.js';
import { lockJob } from '../jobs/jobs.repository.js';
import { jobsService } from '../jobs/jobs.service.js';
import { withHeldKey } from '../idempotency/idempotency.service.js';
import { findTemplate } from '../templates/templates.repository.js';
import { toTemplateResponse } from '../templates/templates.mapper.js';
import { findEstimateSignature } from './documents.repository.js';
import type { AcceptEstimateBody, DeclineEstimateBody, SendDocumentBody, SentDocument, ShareLink } from './documents.schemas.js';
import { sendDocumentEmail } from './document-mail.js';
import {
  documentParties,
  estimateDocument,
  invoiceDocument,
  pdfFilename,
  type CustomerDocument,
  type DocumentParties,
  type EstimateDocument,
} from './document-view.js';
import type { DocumentRenderer } from './document-renderer.js';
import { openShareToken, shareToken, sharePath, type DocumentKind, type SharedRecord } from './share-links.js';

/** What the share routes need to make and read links. */
export interface LinkContext {
  signer: UrlSigner;
  config: Pick<Config, 'SHARE_LINK_TTL_SECONDS'>;
  baseUrl: string;
}

/** Statuses from which sending an estimate moves its job to Estimate Sent. */
const JOB_STATUSES_BEFORE_ESTIMATE: ReadonlySet<string> = new Set(['New', 'Contacted', 'Scheduled']);

async function parties(db: Db, companyId: string, customerUuid: string, jobUuid: string | null): Promise<DocumentParties> {
  const company = await getCompany(db, companyId);
  // A document keeps showing its customer and job after they are deleted.
  const customer = await customersService.get(db, companyId, customerUuid, true);
  const job = jobUuid ? await jobsService.get(db, companyId, jobUuid, true) : null;
  return documentParties(company, customer, job);
}

/** The current record with everything its PDF, page and email show; 404 for a missing or deleted one. */
export async function loadDocument(db: Db, kind: DocumentKind, record: SharedRecord): Promise<CustomerDocument> {
  const { companyId, uuid } = record;
  if (kind === 'estimate') {
    const estimate = await estimatesService.get(db, companyId, uuid, false);
    const template = await findTemplate(db, companyId, estimate.template.uuid, true);
    if (!template) throw notFound('Estimate');
    return estimateDocument(
      await parties(db, companyId, estimate.customer.uuid, estimate.job?.uuid ?? null),
      estimate,
      toTemplateResponse(template),
      await findEstimateSignature(db, companyId, uuid),
    );
  }
  const invoice = await invoicesService.get(db, companyId, uuid, false);
  return invoiceDocument(await parties(db, companyId, invoice.customer.uuid, invoice.job?.uuid ?? null), invoice);
}

/** The PDF of a record's document, rendered off the event loop (or cached); 503 when the renderer is saturated. */
export async function documentPdf(
  renderer: DocumentRenderer,
  record: SharedRecord,
  document: CustomerDocument,
): Promise<{ pdf: Buffer; filename: string }> {
  return { pdf: await renderer.pdf(document, record.companyId), filename: pdfFilename(document) };
}

/** The PDF of a record of the company; 404 for a missing or deleted one. */
export async function recordPdf(db: Db, renderer: DocumentRenderer, kind: DocumentKind, record: SharedRecord) {
  return documentPdf(renderer, record, await loadDocument(db, kind, record));
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
export async function openShared(db: Db, signer: UrlSigner, kind: DocumentKind, token: string): Promise<{ record: SharedRecord; document: CustomerDocument }> {
  const record = openShareToken(signer, kind, token);
  if (!record) throw notFound(kind === 'estimate' ? 'Estimate' : 'Invoice');
  return { record, document: await loadDocument(db, kind, record) };
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
 * the SMTP server accepted the message, in one transaction; a failed send changes nothing. A keyed request
 * holds its key in that transaction, which then spans the send (withHeldKey).
 */
export async function sendDocument(
  db: Db,
  renderer: DocumentRenderer,
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
  if (!to) throw invalidField('to', "is required: the customer has no email address", 'required');
  // The sandbox sends nothing, so it needs no mail server.
  const deliver = !actor.testMode;
  if (deliver && !config.SMTP_URL) throw new AppError('service_unavailable', 'Email is not configured on this server (SMTP_URL).');

  const link = makeShareLink(links, kind, record);
  const pdf = await renderer.pdf(document, actor.companyId);
  const outgoing = { to, cc: body.cc ?? [], message: body.message ?? null, link, pdf, filename: pdfFilename(document) };
  // The status moves are updates of their own records: the request's key is the send's, not theirs.
  const { idempotency: _key, ...mover } = actor;
  return withHeldKey(
    db,
    actor,
    () => sendDocumentEmail(config, document, outgoing, { deliver }),
    async (tx, sent) => {
      if (document.kind === 'estimate') {
        const jobUuid = document.estimate.job?.uuid;
        const job = jobUuid ? await lockJob(tx, actor.companyId, jobUuid) : null;
        if (job && JOB_STATUSES_BEFORE_ESTIMATE.has(job.status)) {
          await jobsService.update(tx, mover, job.uuid, { status: 'Estimate Sent' });
        }
      } else {
        const invoice = await lockInvoice(tx, actor.companyId, uuid);
        if (invoice?.status === 'Draft') await invoicesService.update(tx, mover, uuid, { status: 'Pending' });
      }
      return { message_id: sent.messageId, to, cc: body.cc ?? [], sent_at: sent.sentAt.toISOString(), test_mode: !deliver };
    },
  );
}
