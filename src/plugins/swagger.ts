import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import fastifySwagger from '@fastify/swagger';
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { API_DESCRIPTION } from '../shared/api-description.js';
import { finishOpenApiDocument } from './openapi-finish.js';
import { WEBHOOKS_OPENAPI } from '../modules/webhooks/webhooks.openapi.js';

/**
 * The reference page loads only what this server serves: its script, the document and inline styles. The
 * one inline script (the page's configuration) is allowed by its hash. No upgrade-insecure-requests: the
 * page must work over plain HTTP on any host name (a LAN address, a container name), not only localhost.
 */
function docsCsp(inlineScriptHashes: string[]): string {
  return [
    "default-src 'self'",
    `script-src 'self' ${inlineScriptHashes.map((hash) => `'sha256-${hash}'`).join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const match of html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)) {
    hashes.push(createHash('sha256').update(match[1], 'utf8').digest('base64'));
  }
  return hashes;
}

async function docsHeaders(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (request.url.includes('/js/')) {
    // The bundled script changes only with the package version; let browsers keep it for a day.
    reply.header('cache-control', 'public, max-age=86400');
  } else if (typeof payload === 'string' && payload.startsWith('<!doctype html>')) {
    reply.header('content-security-policy', docsCsp(inlineScriptHashes(payload)));
  }
  return payload;
}

const SERVERS = [
  {
    url: 'http://localhost:3000',
    description: 'A local instance (npm start, or docker compose behind HAProxy); for staging or production, set your deployment\'s HTTPS address as the base URL',
    'x-internal': false,
  },
  {
    url: '/',
    description: 'This server: local, staging or production, whichever serves this document (relative to where it was fetched; the reference page uses it)',
    'x-internal': false,
  },
];

/** The OpenAPI 3.1 document, generated from the route schemas; served at /openapi.json and browsable at /docs. */
export const swaggerPlugin = fp(
  async (app) => {
    await app.register(fastifySwagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Field-Service CRM API',
          version: '1.0.0',
          description: API_DESCRIPTION,
          // Each deployment is run by its own operator; the document names no vendor address.
          contact: { name: 'The operator of this server' },
        },
        // An absolute address first: generated clients take the first server as their default base URL, and a
        // relative one cannot be fetched outside a browser. The relative one describes whichever server serves it.
        servers: SERVERS as Array<{ url: string; description: string }>,
        tags: [
          { name: 'Company', description: 'The company of the API key.' },
          { name: 'Users', description: 'The users of the company.' },
          { name: 'Locations', description: 'Business locations; at most one is primary.' },
          { name: 'Customers', description: 'Residential and commercial customers.' },
          { name: 'Jobs', description: 'Field jobs and their status timestamps.' },
          { name: 'Job photos', description: 'Photos of a job (needs the `photos` add-on).' },
          { name: 'Templates', description: 'Pricing templates that estimates are built from.' },
          { name: 'Estimates', description: 'Estimates priced from a template.' },
          { name: 'Invoices', description: 'Invoices and their arithmetic.' },
          { name: 'Payments', description: 'Payments against invoices.' },
          { name: 'Numbering', description: 'Invoice and estimate numbering (needs the `numbering` add-on).' },
          { name: 'Events', description: 'The gap-free feed of every change: follow it with `after`.' },
          {
            name: 'Webhooks',
            description: 'Webhook endpoints, their delivery log, and the signed requests sent to them (see `webhooks`).',
          },
          {
            name: 'API keys',
            description: 'Keys with scopes, rotation with a grace period, test keys and their sandbox (see the scopes in each operation).',
          },
          {
            name: 'Visits',
            description: 'When a job is done and by whom: visits, technicians who are never double-booked, availability and calendar links.',
          },
          { name: 'Time off', description: "Technicians' time off: it holds its user as a visit does." },
          { name: 'Customer pages', description: 'Share-link pages for customers: no key; the signed link is the credential.' },
          { name: 'Calendar feeds', description: "Technicians' iCalendar feeds for phone calendars: no key; the link is the credential." },
          { name: 'Health', description: 'Liveness and readiness probes; no key needed.' },
        ],
        components: {
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              description:
                '`Authorization: Bearer fsc_live_...` (or `fsc_test_...` for the sandbox), a key issued with the admin CLI or ' +
                '`POST /api/v1/api_keys`. Each operation lists the scope it needs; `*` holds every scope.',
            },
            apiKeyHeader: {
              type: 'apiKey',
              in: 'header',
              name: 'X-API-Key',
              description: 'The same key in the `X-API-Key` header.',
            },
          },
        },
      },
      transform: jsonSchemaTransform,
      transformObject: (input) => ({ ...finishOpenApiDocument(jsonSchemaTransformObject(input)), webhooks: WEBHOOKS_OPENAPI as never }),
    });
    await app.register(apiReference, {
      routePrefix: '/docs',
      logLevel: 'warn',
      hooks: {
        onRequest: async (_request, reply) => {
          reply.header('x-robots-tag', 'noindex');
        },
      },
      configuration: {
        content: () => app.swagger(),
        // The page tries requests against the host it is served from, whatever that is.
        servers: [SERVERS[1]],
        pageTitle: 'Field-Service CRM API reference',
        metaData: { title: 'Field-Service CRM API reference' },
        theme: 'default',
        layout: 'modern',
        // Fonts and the request proxy would come from third-party hosts; the page uses only this server.
        withDefaultFonts: false,
        // The built-in assistant talks to a third-party service; the page keeps to this server.
        agent: { disabled: true },
        telemetry: false,
        // The developer toolbar offers sharing and SDK generation on scalar.com; not for this page.
        showDeveloperTools: 'never',
        defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
        authentication: { preferredSecurityScheme: 'bearerAuth' },
        hideDownloadButton: false,
        // The sidebar lists every operation at once: the reference is searchable and scannable.
        defaultOpenAllTags: true,
        customCss: ':root { --scalar-font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }',
      },
    });
    // The page, its script and its document copy get the page's own headers.
    app.addHook('onSend', async (request, reply, payload) =>
      request.url === '/docs' || request.url.startsWith('/docs/') ? docsHeaders(request, reply, payload) : payload,
    );
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'swagger' },
);
