import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/client.js';
import { AppError, invalidField } from '../errors.js';
import { beginIdempotent, finishIdempotent } from '../modules/idempotency/idempotency.service.js';

interface IdempotencyState {
  key: string;
  /** SHA-256 of the method, the URL and every body byte as it streams in, whoever reads it. */
  hash: Hash;
  ended: boolean;
  /** The body is streamed by the handler (multipart): the key is checked once the handler has read it. */
  streamed: boolean;
  settled: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Fields of `data` never kept for replays (a secret shown once): a replay answers without them. */
    idempotencyOmit?: readonly string[];
  }
  interface FastifyRequest {
    idempotencyKey?: string;
    idempotency?: IdempotencyState;
    /**
     * For a handler that streams its own body (a multipart upload): call once the body has been read and
     * before anything is committed. True when the request was a retry and its first response has been
     * sent; the handler then undoes what it staged and returns the reply.
     */
    settleStreamedIdempotency(reply: FastifyReply): Promise<boolean>;
  }
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** How long a streamed body may take to report its end once its reader is done with it. */
const END_WAIT_MS = 5_000;

function keyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
    throw invalidField('Idempotency-Key', 'must be 1-255 visible ASCII characters', 'invalid_format');
  }
  return header;
}

/** The answer as kept for replays: without the fields the route never lets be stored. */
function storedBody(request: FastifyRequest, payload: unknown): string {
  const body = typeof payload === 'string' ? payload : '';
  const omit = request.routeOptions.config?.idempotencyOmit;
  if (!omit?.length || !body.startsWith('{')) return body;
  const parsed = JSON.parse(body) as { data?: Record<string, unknown> };
  for (const field of omit) delete parsed.data?.[field];
  return JSON.stringify(parsed);
}

/** Claims the key or answers with the stored response; true when the reply was sent (a replay). */
async function begin(db: Db, request: FastifyRequest, reply: FastifyReply, state: IdempotencyState): Promise<boolean> {
  state.settled = true;
  const fingerprint = state.hash.digest('hex');
  const outcome = await beginIdempotent(db, request.principal.companyId, state.key, fingerprint);
  if (outcome.kind === 'replay') {
    reply.header('idempotent-replayed', 'true').code(outcome.status).type('application/json; charset=utf-8');
    await reply.send(outcome.body);
    return true;
  }
  request.idempotencyKey = state.key;
  return false;
}

/** request.settleStreamedIdempotency: the key of a streamed body, checked once the handler has read it. */
async function settleStreamed(db: Db, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const state = request.idempotency;
  if (!state || state.settled) return false;
  if (!state.ended && !request.raw.readableEnded) {
    await Promise.race([once(request.raw, 'end'), new Promise((resolve) => setTimeout(resolve, END_WAIT_MS).unref())]);
  }
  if (!state.ended && !request.raw.readableEnded) throw new AppError('validation_error', 'The request body did not end.');
  return begin(db, request, reply, state);
}

/**
 * POST requests with an Idempotency-Key header run once per company and key; retries get the first
 * response back (marked with the Idempotent-Replayed header). Runs after authentication and validation,
 * so refused requests are never kept. The fingerprint is a hash of the whole request body as it streams
 * in, for every content type: a retry with other bytes under the same key is refused.
 */
export const idempotencyPlugin = fp<{ db: Db }>(
  async (app, { db }) => {
    app.decorateRequest('settleStreamedIdempotency', function (this: FastifyRequest, reply: FastifyReply) {
      return settleStreamed(db, this, reply);
    });

    app.addHook('preParsing', async (request, _reply, payload) => {
      if (request.method !== 'POST') return payload;
      const key = keyOf(request);
      if (key === undefined) return payload;
      const state: IdempotencyState = {
        key,
        hash: createHash('sha256').update(`${request.method} ${request.url}\n`),
        ended: false,
        streamed: /^multipart\//i.test(request.headers['content-type'] ?? ''),
        settled: false,
      };
      request.idempotency = state;
      // A listener beside the body's reader sees every chunk it reads; paused so that nothing flows before
      // the reader (fastify's body parser, or the handler's multipart parser) starts it.
      payload.on('data', (chunk: Buffer) => state.hash.update(chunk));
      payload.once('end', () => {
        state.ended = true;
      });
      payload.pause();
      return payload;
    });

    app.addHook('preHandler', async (request, reply) => {
      const state = request.idempotency;
      // A body the handler streams is fingerprinted once the handler has read it (request.settleStreamedIdempotency).
      if (!state || state.streamed) return;
      // Parsed bodies have been read whole by now; a POST without a body hashes as empty.
      if (await begin(db, request, reply, state)) return reply;
    });

    app.addHook('onSend', async (request, reply, payload) => {
      const key = request.idempotencyKey;
      if (!key) return payload;
      request.idempotencyKey = undefined;
      // The work has committed: the client gets its answer even if keeping it fails. The claim then stays
      // in progress (a retry waits, then gets 409) until it is abandoned (SECURITY.md, idempotency).
      for (let attempt = 1; ; attempt++) {
        try {
          await finishIdempotent(db, request.principal.companyId, key, reply.statusCode, storedBody(request, payload));
          break;
        } catch (error) {
          if (attempt >= 3) {
            request.log.error({ err: error }, 'idempotency record not completed');
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
        }
      }
      return payload;
    });
  },
  { name: 'idempotency' },
);
