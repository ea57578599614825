import type { FastifyPluginAsync } from 'fastify';
import { registerCrudRoutes } from '../../shared/crud-routes.js';
import {
  CreateLocationBody,
  ListLocationsQuery,
  LocationResponse,
  UpdateLocationBody,
} from './locations.schemas.js';
import { locationsService } from './locations.service.js';

export const locationRoutes: FastifyPluginAsync = async (app) => {
  registerCrudRoutes(app, {
    path: '/locations',
    tag: 'Locations',
    noun: 'Location',
    plural: 'locations',
    listItem: LocationResponse,
    record: LocationResponse,
    createBody: CreateLocationBody,
    updateBody: UpdateLocationBody,
    listQuery: ListLocationsQuery,
    service: locationsService,
    descriptions: {
      create: 'Creates an active location. is_primary=true makes any previous primary location non-primary.',
      remove: 'Soft delete. The primary location cannot be deleted (400 primary_location).',
    },
  });
};
