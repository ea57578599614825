import fp from 'fastify-plugin';
import type { Db } from '../db/client.js';
import { AppError } from '../errors.js';
import {
  beginIdempotent,
  finishIdempotent,
  requestFingerprint,
} from '../modules/idempotency/idempotency.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyKey?: string;
  }
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * POST requests with an Idempotency-Key header run once per company and key; retries get the first
 * response back (marked with the Idempotent-Replayed header). Runs after authentication and validation,
 * so refused requests are never kept.
 */
export const idempotencyPlugin = fp<{ db: Db }>(
  async (app, { db }) => {
    app.addHook('preHandler', async (request, reply) => {
      if (request.method !== 'POST') return;
      const header = request.headers['idempotency-key'];
      if (header === undefined) return;
      if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
        throw new AppError('validation_error', 'Idempotency-Key must be 1-255 visible ASCII characters.', [
          { field: 'Idempotency-Key', message: 'must be 1-255 visible ASCII characters' },
        ]);
      }
      // Multipart bodies are streamed to storage by the handler, so their fingerprint is the URL and size.
      const multipart = /^multipart\//i.test(request.headers['content-type'] ?? '');
      const body = multipart ? `multipart:${request.headers['content-length'] ?? ''}` : request.body;
      const fingerprint = requestFingerprint(request.method, request.url, body);
      const outcome = await beginIdempotent(db, request.principal.companyId, header, fingerprint);
      if (outcome.kind === 'replay') {
        reply.header('idempotent-replayed', 'true').code(outcome.status).type('application/json; charset=utf-8');
        return reply.send(outcome.body);
      }
      request.idempotencyKey = header;
    });

    app.addHook('onSend', async (request, reply, payload) => {
      const key = request.idempotencyKey;
      if (!key) return payload;
      request.idempotencyKey = undefined;
      await finishIdempotent(db, request.principal.companyId, key, reply.statusCode, typeof payload === 'string' ? payload : '');
      return payload;
    });
  },
  { name: 'idempotency' },
);
