import fp from 'fastify-plugin';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { API_DESCRIPTION } from '../shared/api-description.js';
import { finishOpenApiDocument } from './openapi-finish.js';

/** The OpenAPI 3.1 document, generated from the route schemas; served at /openapi.json and /docs. */
export const swaggerPlugin = fp(
  async (app) => {
    await app.register(fastifySwagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Field-Service CRM API',
          version: '1.0.0',
          description: API_DESCRIPTION,
        },
        servers: [{ url: '/', description: 'This server' }],
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
          { name: 'Customer pages', description: 'Share-link pages for customers: no key; the signed link is the credential.' },
          { name: 'Health', description: 'Liveness and readiness probes; no key needed.' },
        ],
        components: {
          securitySchemes: {
            bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer fsc_live_...' },
            apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          },
        },
      },
      transform: jsonSchemaTransform,
      transformObject: (input) => finishOpenApiDocument(jsonSchemaTransformObject(input)),
    });
    await app.register(fastifySwaggerUi, { routePrefix: '/docs', staticCSP: true });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'swagger' },
);
