import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { crudRoutes } from '../../shared/crud-routes.js';
import {
  CreateLocationBody,
  ListLocationsQuery,
  LocationResponse,
  UpdateLocationBody,
} from './locations.schemas.js';
import { locationsService } from './locations.service.js';

export const locationRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const crud = crudRoutes(app, {
    scope: 'locations',
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
  app.get('/locations', crud.list('listLocations'));
  app.get('/locations/:uuid', crud.get('getLocation'));
  app.post('/locations', crud.create('createLocation'));
  app.put('/locations/:uuid', crud.update('updateLocation'));
  app.patch('/locations/:uuid', crud.patch('patchLocation'));
  app.delete('/locations/:uuid', crud.remove('deleteLocation'));
};
