import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import { envelopeDataJson, etagOfJson, ifNoneMatchMatches, parseEntityTags } from '../shared/etag.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers one record (GET, create or update of an item): it carries an ETag (DECISIONS.md §9.4). */
    etag?: boolean;
    /** Fields the answer carries that a GET of the record does not (a secret shown once): left out of the ETag. */
    etagOmit?: readonly string[];
  }
}

/** Marks an operation in the OpenAPI document as one that answers with an ETag (see openapi-finish.ts). */
export const ETAG_OPERATION_MARK = 'x-etag';

/** Marks the route-level hook, so a HEAD route copied from its GET gets it once. */
const ETAG_HOOK = Symbol('etagHook');

/** The answer with its ETag set, or null for a 304 (see etagPlugin). */
function withEtag(request: FastifyRequest, reply: FastifyReply, payload: unknown, omit: readonly string[] | undefined): unknown {
  if (reply.statusCode !== 200 || typeof payload !== 'string') return payload;
  let data = envelopeDataJson(payload);
  if (data === undefined) return payload;
  if (omit) {
    // The record as a GET shows it: the once-only fields removed, the other fields in their order.
    const record = JSON.parse(data) as Record<string, unknown>;
    for (const field of omit) delete record[field];
    data = JSON.stringify(record);
  }
  const etag = etagOfJson(data);
  reply.header('etag', etag);
  const safe = request.method === 'GET' || request.method === 'HEAD';
  if (safe && ifNoneMatchMatches(parseEntityTags(request.headers['if-none-match']), etag)) {
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    // HEAD routes drop the payload themselves and need it to set Content-Length (the 200's, as RFC 9110 allows).
    return request.method === 'HEAD' ? payload : null;
  }
  return payload;
}

/**
 * ETags for every route whose config says `etag: true`: the strong ETag of the answered record's JSON on
 * each 200, and 304 without a body for a GET whose If-None-Match matches it. The tag is computed from the
 * serialized answer itself (replayed idempotent answers included), with the same function the write
 * paths use to compare If-Match, so the two always agree.
 */
export const etagPlugin = fp(
  async (app) => {
    // The hook goes on the routes that answer one record only: every other route runs without it.
    app.addHook('onRoute', (route) => {
      if (!route.config?.etag) return;
      if (route.schema) route.schema = { ...route.schema, [ETAG_OPERATION_MARK]: true } as FastifySchema;
      const omit = route.config.etagOmit?.length ? route.config.etagOmit : undefined;
      const onSend = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
        done(null, withEtag(request, reply, payload, omit));
      };
      const others = (route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]).filter(
        (hook) => !(ETAG_HOOK in hook),
      );
      Object.assign(onSend, { [ETAG_HOOK]: true });
      // A HEAD route made from a GET ends with fastify's hook that drops the body: the tag is taken before it.
      route.onSend = route.method === 'HEAD' ? [onSend, ...others] : [...others, onSend];
    });
  },
  { name: 'etag' },
);
