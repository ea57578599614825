import fp from 'fastify-plugin';
import fastifySwagger from '@fastify/swagger';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { API_DESCRIPTION } from '../shared/api-description.js';
import { finishOpenApiDocument } from './openapi-finish.js';
import { registerApiReference } from './api-reference.js';
import { WEBHOOKS_OPENAPI } from '../modules/webhooks/webhooks.openapi.js';

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
    registerApiReference(app, {
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
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'swagger' },
);
