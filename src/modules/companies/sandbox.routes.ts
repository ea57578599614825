import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AppError } from '../../errors.js';
import { errorResponses, MessageSchema, ok } from '../../shared/envelope.js';
import { SECURITY } from '../../shared/openapi.js';
import { emptySandbox } from './sandbox.service.js';

/** DELETE /sandbox (DECISIONS §12): a test key empties its company's sandbox. */
export const sandboxRoutes: FastifyPluginAsyncZod = async (app) => {
  app.delete(
    '/sandbox',
    {
      config: { scope: 'api_keys:write' },
      schema: {
        tags: ['API keys'],
        operationId: 'deleteSandbox',
        summary: "Empty the company's sandbox",
        description:
          'Deletes every record, event, webhook endpoint and delivery of the sandbox (and its photo files) in one ' +
          'transaction; the keys, the users and the settings stay, and document numbers start again at 1. Needs a test ' +
          'key with `*` or `api_keys:write`; a live key is 400 and empties nothing.',
        security: SECURITY,
        response: { 200: MessageSchema.describe('The sandbox is empty; `data.message` confirms it.'), ...errorResponses() },
      },
    },
    async (request) => {
      const { mode, companyId } = request.principal;
      if (mode !== 'test') {
        throw new AppError('validation_error', 'Only a test key (fsc_test_...) can empty the sandbox; nothing was deleted.');
      }
      await emptySandbox(app.deps.database.db, app.deps.storage, companyId);
      return ok({ message: 'Sandbox emptied successfully' });
    },
  );
};
