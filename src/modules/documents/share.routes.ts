import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { translate } from '../../plugins/errors.js';
import { keylessRateLimitPlugin } from '../../plugins/keyless-rate-limit.js';
import { isEmptyOtherBody } from '../../plugins/json-body.js';
import { ErrorSchema, ok, okSchema } from '../../shared/envelope.js';
import { linkBase, requestLinkBase } from '../../shared/urls.js';
import { linkSigner } from '../../storage/url-signer.js';
import { PdfResponse, sendPdf } from './documents.routes.js';
import { AcceptEstimateBody, CustomerEstimateView, DeclineEstimateBody, ShareTokenParams } from './documents.schemas.js';
import { acceptEstimate, declineEstimate, documentPdf, openShared } from './documents.service.js';
import { RendererUnavailableError } from './document-renderer.js';
import { estimateView, type CustomerDocument, type EstimateDocument } from './document-view.js';
import { SHARE_SEGMENT, sharePath, type DocumentKind } from './share-links.js';
import { busyPage, notFoundPage, rateLimitedPage, type PageOptions } from './share-page.js';
import type { SharedRecord } from './share-links.js';

const TAG = 'Customer pages';
const FORM = 'application/x-www-form-urlencoded';

const HtmlResponse = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });

const NOT_FOUND = {
  description: 'A malformed, tampered or expired link, or a deleted record (`not_found`); the page itself answers an HTML page.',
  content: { 'application/json': { schema: ErrorSchema } },
};

/** The 404 of a route that answers JSON or, to an HTML form, a page. */
const NOT_FOUND_JSON_OR_PAGE = {
  description: 'A malformed, tampered or expired link, or a deleted record: `not_found` in the envelope to a JSON request, an HTML page to a form.',
  content: { 'application/json': { schema: ErrorSchema }, 'text/html': { schema: z.string() } },
};

const RATE_LIMITED =
  'Too many requests from this client address: SHARE_RATE_LIMIT_PER_MINUTE (default 60) a minute over every page served ' +
  'without a key (`rate_limited`); retry after the seconds in Retry-After.';

const RateLimitedJson = { description: RATE_LIMITED, content: { 'application/json': { schema: ErrorSchema } } };

function isForm(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith(FORM);
}

/** A strict page policy: nothing external, no scripts, the one style element by nonce, forms to this origin only. */
function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function sendHtml(reply: FastifyReply, status: number, render: (nonce: string) => string) {
  const nonce = randomBytes(16).toString('base64');
  return sendRendered(reply, status, nonce, render(nonce));
}

function sendRendered(reply: FastifyReply, status: number, nonce: string, html: string) {
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', contentSecurityPolicy(nonce))
    .send(html);
}

/**
 * A form body as the JSON body it stands for: empty fields are absent, a single checked add-on is a
 * one-element list.
 */
function normalizeForm(body: unknown): unknown {
  if (!body || typeof body !== 'object') return body;
  const normalized: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (value === '') continue;
    normalized[name] = name === 'selected_addons' && typeof value === 'string' ? [value] : value;
  }
  return normalized;
}

/**
 * The customer pages of share links, outside /api/v1 and without a key: the signed token in the path
 * is the only credential. Forms post form-encoded bodies; scripts post JSON.
 */
export const shareRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  // One allowance per client address over every keyless route; the page and its forms are told in HTML.
  await app.register(keylessRateLimitPlugin, {
    htmlAnswer: (request, reply) => {
      const page = (request.method === 'GET' || request.method === 'HEAD') && request.routeOptions.url?.endsWith('/:token');
      return page || isForm(request) ? sendHtml(reply, 429, rateLimitedPage) : undefined;
    },
  });
  // Form bodies are accepted by these routes only; the API stays JSON.
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  const { config } = app.deps;
  const db = () => app.deps.database.db;
  const signer = linkSigner(config);

  app.addHook('preValidation', async (request) => {
    if (request.method === 'POST' && isForm(request)) request.body = normalizeForm(request.body);
    else if (isEmptyOtherBody(request)) request.body = undefined;
  });

  /** The customer page (built off the event loop when the document is large); a saturated renderer's page says so. */
  async function sendPage(
    reply: FastifyReply,
    status: number,
    record: SharedRecord,
    document: CustomerDocument,
    options: Omit<PageOptions, 'nonce' | 'url'>,
  ) {
    const nonce = randomBytes(16).toString('base64');
    // The page's own link, as share_link answered it; a host that cannot make one leaves the path alone.
    const { request } = reply;
    const url = `${linkBase(config.PUBLIC_BASE_URL, request.protocol, request.host) ?? ''}${options.path}`;
    try {
      return sendRendered(reply, status, nonce, await app.documentRenderer.page(document, { ...options, url, nonce }, record.companyId));
    } catch (error) {
      if (!(error instanceof RendererUnavailableError)) throw error;
      return sendHtml(reply.header('retry-after', String(error.retryAfterSeconds)), 503, busyPage);
    }
  }

  for (const kind of ['estimate', 'invoice'] as const) {
    const segment = SHARE_SEGMENT[kind];
    const Kind = kind === 'estimate' ? 'Estimate' : 'Invoice';

    app.get(
      `/share/${segment}/:token`,
      {
        schema: {
          tags: [TAG],
          operationId: `get${Kind}Page`,
          summary: `The customer page of a shared ${kind}`,
          description:
            `HTML for the customer (no key; the signed token is the credential): the company, the customer, the ${kind}, its amounts ` +
            'with two decimals and a link to its PDF (`<url>/pdf`). ' +
            (kind === 'estimate'
              ? 'While the estimate is Pending, plain forms accept (choosing the tier and add-ons, signing with a name) or decline it; afterwards the page shows the outcome. '
              : '') +
            'A malformed, tampered or expired link, or a deleted record: 404 (an HTML page).',
          security: [],
          params: ShareTokenParams,
          response: {
            200: HtmlResponse('The page.'),
            404: HtmlResponse('The link is not available.'),
            429: HtmlResponse(`${RATE_LIMITED} The page says so in a few words.`),
            503: HtmlResponse('The page of a large document could not be built now: every renderer is busy (Retry-After says when to come back).'),
          },
        },
      },
      async (request, reply) => {
        const path = sharePath(kind, request.params.token);
        try {
          const { record, document } = await openShared(db(), signer, kind, request.params.token);
          return await sendPage(reply, 200, record, document, { path });
        } catch (error) {
          if (error instanceof AppError && error.code === 'not_found') return sendHtml(reply, 404, notFoundPage);
          throw error;
        }
      },
    );

    app.get(
      `/share/${segment}/:token/pdf`,
      {
        schema: {
          tags: [TAG],
          operationId: `get${Kind}SharedPdf`,
          summary: `The PDF of a shared ${kind}`,
          description: `The same PDF as GET /api/v1/${segment}/{uuid}/pdf, without a key. Errors answer the JSON envelope.`,
          security: [],
          params: ShareTokenParams,
          response: {
            200: PdfResponse,
            404: NOT_FOUND,
            429: RateLimitedJson,
            503: {
              description: 'Every PDF renderer is busy and the queue is full (`service_unavailable`); retry after the seconds in Retry-After.',
              content: { 'application/json': { schema: ErrorSchema } },
            },
          },
        },
      },
      async (request, reply) => {
        const { record, document } = await openShared(db(), signer, kind, request.params.token);
        return sendPdf(reply, await documentPdf(app.documentRenderer, record, document));
      },
    );
  }

  /**
   * Runs an answer: JSON gets the envelope (the customer's view, or the error); a form gets 303 back
   * to the page, or, with the same status a JSON request would get (400), the page again with the error.
   */
  async function answer(request: FastifyRequest, reply: FastifyReply, token: string, run: () => Promise<EstimateDocument>) {
    const kind: DocumentKind = 'estimate';
    const path = sharePath(kind, token);
    const form = isForm(request);
    try {
      if (request.validationError) throw request.validationError;
      const document = await run();
      if (form) return reply.status(303).header('location', path).send();
      return ok(estimateView(document, `${requestLinkBase(request, config.PUBLIC_BASE_URL)}${path}`));
    } catch (caught) {
      if (!form) throw caught;
      const error = translate(caught);
      if (error.code === 'not_found') return sendHtml(reply, 404, notFoundPage);
      if (error.statusCode !== 400) throw caught;
      // The page again, with the error; an estimate already answered shows its outcome instead of the forms.
      const { record, document } = await openShared(db(), signer, kind, token);
      return sendPage(reply, 400, record, document, {
        path,
        error: { message: error.message, details: error.details },
        values: request.body as Record<string, unknown>,
      });
    }
  }

  const answerResponses = (description: string) => ({
    200: okSchema(CustomerEstimateView).describe(`JSON request: ${description}`),
    303: z.null().describe('Form request: back to the page (GET <url>, in Location), which shows the outcome.'),
    400: {
      description:
        'JSON: `validation_error` (signature_name missing, selected_tier missing for a tiered template, an unknown add-on, ...) or ' +
        '`invalid_status_transition` (the estimate is not Pending: already answered or expired). A form gets the page again ' +
        '(text/html) with the error: the forms with what was entered, or the outcome when the estimate was already answered.',
      content: { 'application/json': { schema: ErrorSchema }, 'text/html': { schema: z.string() } },
    },
    404: NOT_FOUND_JSON_OR_PAGE,
    429: {
      description: `${RATE_LIMITED} A form gets a short HTML page instead.`,
      content: { 'application/json': { schema: ErrorSchema }, 'text/html': { schema: z.string() } },
    },
  });

  app.post(
    '/share/estimates/:token/accept',
    {
      attachValidation: true,
      schema: {
        tags: [TAG],
        operationId: 'acceptSharedEstimate',
        summary: 'Accept a shared estimate',
        description:
          'The customer accepts a Pending estimate, as JSON or as the page\'s form (application/x-www-form-urlencoded). The estimate is ' +
          're-priced with the chosen tier and add-ons (selected_addons absent = none) by the estimate arithmetic, moves to Accepted ' +
          '(responded_at set), stores response_notes and the signature, and records its change like any estimate update. Of two ' +
          'simultaneous answers one wins; the other is 400 invalid_status_transition.',
        security: [],
        params: ShareTokenParams,
        body: AcceptEstimateBody,
        consumes: ['application/json', FORM],
        response: answerResponses('the customer\'s view of the accepted estimate.'),
      },
    },
    (request, reply) => answer(request, reply, request.params.token, () => acceptEstimate(db(), signer, request.params.token, request.body)),
  );

  app.post(
    '/share/estimates/:token/decline',
    {
      attachValidation: true,
      schema: {
        tags: [TAG],
        operationId: 'declineSharedEstimate',
        summary: 'Decline a shared estimate',
        description:
          'The customer declines a Pending estimate, as JSON or as the page\'s form: it moves to Declined (responded_at set) and ' +
          'stores response_notes; a second answer is 400 invalid_status_transition.',
        security: [],
        params: ShareTokenParams,
        body: DeclineEstimateBody.nullish(),
        consumes: ['application/json', FORM],
        response: answerResponses('the customer\'s view of the declined estimate.'),
      },
    },
    (request, reply) => answer(request, reply, request.params.token, () => declineEstimate(db(), signer, request.params.token, request.body ?? {})),
  );
};
