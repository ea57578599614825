import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { crudRoutes } from '../../shared/crud-routes.js';
import {
  CreateCustomerBody,
  CustomerResponse,
  ListCustomersQuery,
  UpdateCustomerBody,
} from './customers.schemas.js';
import { customersService } from './customers.service.js';

export const customerRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const crud = crudRoutes(app, {
    scope: 'customers',
    tag: 'Customers',
    noun: 'Customer',
    plural: 'customers',
    listItem: CustomerResponse,
    record: CustomerResponse,
    createBody: CreateCustomerBody,
    updateBody: UpdateCustomerBody,
    listQuery: ListCustomersQuery,
    service: customersService,
    descriptions: {
      list: 'Newest first. filter: all | residential | commercial | vip. search: case-insensitive substring of first_name, last_name, "first last", company_name, email, phone or uuid.',
      create: 'Physical and billing address fields are accepted. primary_service_location_uuid must be a live location of the company.',
    },
  });
  app.get('/customers', crud.list('listCustomers'));
  app.get('/customers/:uuid', crud.get('getCustomer'));
  app.post('/customers', crud.create('createCustomer'));
  app.put('/customers/:uuid', crud.update('updateCustomer'));
  app.patch('/customers/:uuid', crud.patch('patchCustomer'));
  app.delete('/customers/:uuid', crud.remove('deleteCustomer'));
};
