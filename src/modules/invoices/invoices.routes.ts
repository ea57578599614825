import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { errorResponses, ok, okSchema } from '../../shared/envelope.js';
import { crudRoutes } from '../../shared/crud-routes.js';
import { SECURITY } from '../../shared/openapi.js';
import {
  CreateInvoiceBody,
  InvoiceListItem,
  InvoicePreview,
  InvoiceResponse,
  ListInvoicesQuery,
  PreviewInvoiceBody,
  UpdateInvoiceBody,
} from './invoices.schemas.js';
import { invoicesService, previewInvoice } from './invoices.service.js';

export const invoiceRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();

  // Registered before the CRUD routes so the static path reads clearly next to /invoices/:uuid.
  app.post(
    '/invoices/preview',
    {
      // A dry run writes nothing: reading the area is enough.
      config: { scope: 'invoices:read', idempotency: 'read-only' },
      schema: {
        tags: ['Invoices'],
        operationId: 'previewInvoice',
        summary: 'Preview an invoice (dry run)',
        description:
          'Computes the totals create would compute for the same input; nothing is written. balance_amount equals total_amount. ' +
          'Every field is optional: `{}` (or no body at all) previews 0; a body that is not a JSON object is 400.',
        security: SECURITY,
        body: PreviewInvoiceBody,
        response: { 200: okSchema(InvoicePreview), ...errorResponses(409, 413) },
      },
      // No body at all reads as {}; a JSON null, array or scalar was already refused (src/plugins/json-body.ts).
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => ok(await previewInvoice(app.deps.database.db, request.principal.companyId, request.body)),
  );

  const crud = crudRoutes(app, {
    scope: 'invoices',
    tag: 'Invoices',
    noun: 'Invoice',
    plural: 'invoices',
    listItem: InvoiceListItem,
    record: InvoiceResponse,
    createBody: CreateInvoiceBody,
    updateBody: UpdateInvoiceBody,
    listQuery: ListInvoicesQuery,
    service: invoicesService,
    descriptions: {
      list: 'Newest first. status: All | Draft | Pending | Paid | Overdue (Overdue: Pending, past due_date in the location\'s timezone, balance above 0; Pending excludes those). Filters customer_uuid, job_uuid; search matches invoice_number. A page holds at most 20,000 line items in all: a page that would hold more is 400 naming limit (ask for fewer invoices a page).',
      create:
        'Creates an invoice for a job of the company and moves the job to Invoiced. customer_uuid must be the customer of the job and of the estimate when one is given (one customer per document). The number comes from the numbering settings. Amounts: line_items, else subtotal, else the estimate, else the job (actual_amount, else estimated_amount, else 0).',
      update:
        'Partial update: absent fields are unchanged, null clears a nullable field. job_uuid may move the invoice to another live job of its customer (one customer per document: 400 invalid_reference naming job_uuid otherwise); neither job\'s status moves. customer_uuid and estimate_uuid cannot change (400 read_only).',
    },
  });
  app.get('/invoices', crud.list('listInvoices'));
  app.get('/invoices/:uuid', crud.get('getInvoice'));
  app.post('/invoices', crud.create('createInvoice'));
  app.put('/invoices/:uuid', crud.update('updateInvoice'));
  app.patch('/invoices/:uuid', crud.patch('patchInvoice'));
  app.delete('/invoices/:uuid', crud.remove('deleteInvoice'));
};
