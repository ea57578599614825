import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../auth/principal.js';
import { SECURITY } from '../../shared/openapi.js';
import { errorResponses, ok, okSchema } from '../../shared/envelope.js';
import { requestLinkBase } from '../../shared/urls.js';
import { linkSigner } from '../../storage/url-signer.js';
import { DocumentParams, SendDocumentBody, SentDocument, ShareLink } from './documents.schemas.js';
import { createShareLink, recordPdf, sendDocument, type LinkContext } from './documents.service.js';
import type { DocumentKind } from './share-links.js';

export const PdfResponse = {
  description: 'The PDF of the current record (a copy rendered earlier is served only while the record and everything it shows are unchanged).',
  content: { 'application/pdf': { schema: z.string().meta({ format: 'binary' }) } },
};

export function sendPdf(reply: FastifyReply, { pdf, filename }: { pdf: Buffer; filename: string }) {
  return reply
    .header('content-type', 'application/pdf')
    .header('content-disposition', `inline; filename="${filename}"`)
    .header('content-length', String(pdf.length))
    .send(pdf);
}

const NOUNS: Record<DocumentKind, { path: string; noun: string; tag: string; pascal: string }> = {
  invoice: { path: '/invoices', noun: 'invoice', tag: 'Invoices', pascal: 'Invoice' },
  estimate: { path: '/estimates', noun: 'estimate', tag: 'Estimates', pascal: 'Estimate' },
};

const NoBody = z.strictObject({}).nullish().describe('No fields; the body may be omitted.');

/** PDFs, share links and email of invoices and estimates (DECISIONS.md §10). */
export const documentRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const { config } = app.deps;
  const db = () => app.deps.database.db;
  const links = (request: FastifyRequest): LinkContext => ({
    signer: linkSigner(config),
    config,
    baseUrl: requestLinkBase(request, config.PUBLIC_BASE_URL),
  });

  for (const kind of ['invoice', 'estimate'] as const) {
    const { path, noun, tag, pascal } = NOUNS[kind];
    // A PDF reads the document; a share link or an email acts on it (DECISIONS §12).
    const scopeArea = kind === 'invoice' ? 'invoices' : 'estimates';

    app.get(
      `${path}/:uuid/pdf`,
      {
        config: { scope: `${scopeArea}:read` },
        schema: {
          tags: [tag],
          operationId: `get${pascal}Pdf`,
          summary: `The ${noun} as a PDF`,
          description:
            `application/pdf: the company's name and address, the customer and service address, the number and dates, ` +
            (kind === 'invoice' ? 'the line items' : 'the chosen tier, add-ons and adjustments') +
            ', the amounts exactly as the JSON record has them (two decimals), notes and terms. Long tables continue on further pages ' +
            'with their header repeated. Always the current record: rendered off the request path, and served from a cache only while ' +
            'the record and everything it shows are unchanged. When every renderer is busy and the queue is full: 503 ' +
            'service_unavailable with Retry-After. Errors answer the JSON envelope.',
          security: SECURITY,
          params: DocumentParams,
          response: { 200: PdfResponse, ...errorResponses(404) },
        },
      },
      async (request, reply) => {
        const record = { companyId: request.principal.companyId, uuid: request.params.uuid };
        return sendPdf(reply, await recordPdf(db(), app.documentRenderer, kind, record));
      },
    );

    app.post(
      `${path}/:uuid/share_link`,
      {
        // A share link is a signed token: nothing is written.
        config: { scope: `${scopeArea}:write`, idempotency: 'read-only' },
        schema: {
          tags: [tag],
          operationId: `create${pascal}ShareLink`,
          summary: `Make a share link to the ${noun}'s customer page`,
          description:
            `A signed link to a page served without a key (base: PUBLIC_BASE_URL, else this request's host), valid for ` +
            `SHARE_LINK_TTL_SECONDS (default 30 days). The page shows the company, the customer, the ${noun} and its amounts, ` +
            'and links to its PDF at `<url>/pdf`' +
            (kind === 'estimate' ? '; while the estimate is Pending the customer can accept or decline it there' : '') +
            '. Each call makes a new link; earlier links keep working until they expire. A link of a deleted record answers 404.',
          security: SECURITY,
          params: DocumentParams,
          body: NoBody,
          response: { 200: okSchema(ShareLink), ...errorResponses(404, 409) },
        },
      },
      async (request) =>
        ok(await createShareLink(db(), links(request), kind, { companyId: request.principal.companyId, uuid: request.params.uuid })),
    );

    app.post(
      `${path}/:uuid/send`,
      {
        config: { scope: `${scopeArea}:write`, idempotency: 'atomic' },
        schema: {
          tags: [tag],
          operationId: `send${pascal}`,
          summary: `Email the ${noun} to the customer`,
          description:
            'Sends one email through SMTP_URL: a plain-text and an HTML part with a new share link, the PDF attached, Reply-To ' +
            "the company's email. `to` defaults to the customer's email (400 when neither exists). " +
            (kind === 'estimate'
              ? "After the mail server accepts it, the estimate's job moves to Estimate Sent when it is New, Contacted or Scheduled. "
              : 'After the mail server accepts it, a Draft invoice becomes Pending. ') +
            'SMTP_URL unset, or a mail server that refuses or cannot be reached: 503 service_unavailable and nothing changes. ' +
            'With a test key (the sandbox) the email is made but goes nowhere, no mail server is needed, and the answer says `test_mode: true`.',
          security: SECURITY,
          params: DocumentParams,
          body: SendDocumentBody.nullish(),
          response: { 200: okSchema(SentDocument), ...errorResponses(404, 409, 413) },
        },
      },
      async (request) =>
        ok(await sendDocument(db(), app.documentRenderer, config, links(request), kind, actorOf(request), request.params.uuid, request.body ?? {})),
    );
  }
};
