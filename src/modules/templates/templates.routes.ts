import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { crudRoutes } from '../../shared/crud-routes.js';
import {
  CreateTemplateBody,
  ListTemplatesQuery,
  TemplateResponse,
  UpdateTemplateBody,
} from './templates.schemas.js';
import { templatesService } from './templates.service.js';

export const templateRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const crud = crudRoutes(app, {
    scope: 'templates',
    tag: 'Templates',
    noun: 'Template',
    plural: 'templates',
    listItem: TemplateResponse,
    record: TemplateResponse,
    createBody: CreateTemplateBody,
    updateBody: UpdateTemplateBody,
    listQuery: ListTemplatesQuery,
    service: templatesService,
    descriptions: {
      list: 'Newest first. Optional filters pricing_type (flat | tiered) and is_active.',
      create:
        'Estimates are priced from templates. flat: base_price required. tiered: tiers good, better, best all required. ' +
        'addons [{id, name, price}] with ids unique within the template. tax_rate is a percent, default 0.',
      update:
        'Partial update; addons and tiers are replaced as a whole. The flat/tiered rules are checked against the merged record, ' +
        'so switching pricing_type needs the matching base_price or tiers to be present.',
    },
  });
  app.get('/templates', crud.list('listTemplates'));
  app.get('/templates/:uuid', crud.get('getTemplate'));
  app.post('/templates', crud.create('createTemplate'));
  app.put('/templates/:uuid', crud.update('updateTemplate'));
  app.patch('/templates/:uuid', crud.patch('patchTemplate'));
  app.delete('/templates/:uuid', crud.remove('deleteTemplate'));
};
