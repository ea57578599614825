import type { FastifyPluginAsync } from 'fastify';
import { registerCrudRoutes } from '../../shared/crud-routes.js';
import {
  CreateCustomerBody,
  CustomerResponse,
  ListCustomersQuery,
  UpdateCustomerBody,
} from './customers.schemas.js';
import { customersService } from './customers.service.js';

export const customerRoutes: FastifyPluginAsync = async (app) => {
  registerCrudRoutes(app, {
    path: '/customers',
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
};
