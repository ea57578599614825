import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { crudRoutes } from '../../shared/crud-routes.js';
import {
  CreatePaymentBody,
  ListPaymentsQuery,
  PaymentListItem,
  PaymentResponse,
  UpdatePaymentBody,
} from './payments.schemas.js';
import { paymentsService } from './payments.service.js';

export const paymentRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const crud = crudRoutes(app, {
    scope: 'payments',
    tag: 'Payments',
    noun: 'Payment',
    plural: 'payments',
    listItem: PaymentListItem,
    record: PaymentResponse,
    createBody: CreatePaymentBody,
    updateBody: UpdatePaymentBody,
    listQuery: ListPaymentsQuery,
    service: paymentsService,
    descriptions: {
      list: 'Newest first. Filters: invoice_uuid, customer_uuid, payment_type, status.',
      create:
        'Records a payment against a live, non-Draft invoice of the company. Completed payments count toward the invoice\'s paid_amount at once; one that would exceed the total is 400. A zero balance makes the invoice Paid.',
      update:
        'Partial update. Status moves: Pending -> Completed | Failed, Completed -> Refunded. Refunding or deleting a Completed payment reopens a Paid invoice.',
      remove: 'Soft delete; a deleted Completed payment stops counting toward the invoice.',
    },
  });
  app.get('/payments', crud.list('listPayments'));
  app.get('/payments/:uuid', crud.get('getPayment'));
  app.post('/payments', crud.create('createPayment'));
  app.put('/payments/:uuid', crud.update('updatePayment'));
  app.patch('/payments/:uuid', crud.patch('patchPayment'));
  app.delete('/payments/:uuid', crud.remove('deletePayment'));
};
