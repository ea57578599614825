import fp from 'fastify-plugin';
import { AppError } from '../errors.js';

/**
 * A request body must be a JSON object (DECISIONS.md §1, §4): `null`, an array, a string, a number or a
 * boolean is 400 on every route, whatever its body schema says, before validation and the handler run.
 * An absent body stays absent, so routes that take none, or an optional one, keep working. Multipart
 * uploads are read by their handler and never reach this check as a parsed body.
 */
export const jsonBodyPlugin = fp(
  async (app) => {
    app.addHook('preValidation', async (request) => {
      const body: unknown = request.body;
      // An empty non-JSON body (some clients send `Content-Type: text/plain` on a bodiless DELETE) is no body.
      if (body === undefined || (body === '' && !/json/i.test(request.headers['content-type'] ?? ''))) return;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        const received = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`;
        throw new AppError('validation_error', `Invalid body: must be a JSON object, received ${received}.`, [
          { field: 'body', message: 'must be a JSON object' },
        ]);
      }
    });
  },
  { name: 'json-body' },
);
