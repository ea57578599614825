import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { crudRoutes } from '../../shared/crud-routes.js';
import { SECURITY } from '../../shared/openapi.js';
import { errorResponses, ok, okSchema } from '../../shared/envelope.js';
import {
  ARITHMETIC,
  CreateEstimateBody,
  EstimateListItem,
  EstimatePreview,
  EstimateResponse,
  ListEstimatesQuery,
  PreviewEstimateBody,
  UpdateEstimateBody,
} from './estimates.schemas.js';
import { estimatesService, previewEstimate } from './estimates.service.js';

export const estimateRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/estimates/preview',
    {
      // A dry run writes nothing: reading the area is enough.
      config: { scope: 'estimates:read', idempotency: 'read-only' },
      schema: {
        tags: ['Estimates'],
        operationId: 'previewEstimate',
        summary: 'Preview estimate amounts (dry run)',
        description: `Computes what create would store for a template and pricing inputs; nothing is written. ${ARITHMETIC}`,
        security: SECURITY,
        body: PreviewEstimateBody,
        response: { 200: okSchema(EstimatePreview), ...errorResponses(409, 413) },
      },
    },
    async (request) => ok(await previewEstimate(app.deps.database.db, request.principal.companyId, request.body)),
  );

  const crud = crudRoutes(app, {
    scope: 'estimates',
    tag: 'Estimates',
    noun: 'Estimate',
    plural: 'estimates',
    listItem: EstimateListItem,
    record: EstimateResponse,
    createBody: CreateEstimateBody,
    updateBody: UpdateEstimateBody,
    listQuery: ListEstimatesQuery,
    service: estimatesService,
    descriptions: {
      list:
        'Newest first; each estimate carries customer {uuid, first_name, last_name}. Filters: status, customer_uuid, job_uuid; ' +
        'search matches estimate_number, template_name or service_description.',
      get: 'With customer, job {uuid, title, status} or null, template {uuid, name, pricing_type} and location {uuid, name} or null. ' +
        'A soft-deleted estimate is 404 unless include_deleted=true.',
      create:
        'customer_uuid and template_uuid must be live records of the company, as must job_uuid and location_uuid when given (400 otherwise); the job must be one of the customer\'s (one customer per document). ' +
        'estimate_number is assigned from the numbering settings and cannot be supplied. template_name and pricing_type are copied from the template. ' +
        ARITHMETIC,
      update:
        'Updatable: status, response_notes, selected_tier, quantity, selected_addons, adjustments, service_description, internal_notes, ' +
        'customer_notes, expires_at, job_uuid, location_uuid; customer_uuid and template_uuid cannot change (400 read_only); a new job_uuid must be a job of the estimate\'s customer (400 naming job_uuid). ' +
        'Status: Pending -> Accepted | Declined | Expired only (400 invalid_status_transition); the current status is a no-op. ' +
        'Accepted and Declined set responded_at; Expired leaves it null. Sending a pricing field recomputes the amounts.',
    },
  });
  app.get('/estimates', crud.list('listEstimates'));
  app.get('/estimates/:uuid', crud.get('getEstimate'));
  app.post('/estimates', crud.create('createEstimate'));
  app.put('/estimates/:uuid', crud.update('updateEstimate'));
  app.patch('/estimates/:uuid', crud.patch('patchEstimate'));
  app.delete('/estimates/:uuid', crud.remove('deleteEstimate'));
};
