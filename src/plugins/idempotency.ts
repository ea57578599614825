import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler, preParsingAsyncHookHandler } from 'fastify';
import type { Db } from '../db/client.js';
import { AppError, invalidField } from '../errors.js';
import {
  keepAnswer,
  lookupIdempotent,
  replaceAnswer,
  replayOf,
  type Replay,
} from '../modules/idempotency/idempotency.service.js';
import { ok } from '../shared/envelope.js';

interface IdempotencyState {
  key: string;
  /**
   * SHA-256 of the method, the URL and the body: a parsed JSON body as canonical JSON (keys sorted, no
   * spacing), a streamed one (multipart) byte by byte as it streams in, its boundary left out.
   */
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
    /**
     * How a POST keeps its Idempotency-Key; every POST says it (checked as routes are added). Nothing is
     * written for a key before the work. 'atomic': the route's write completes the key in its own transaction
     * (shared/keyed-writes.ts), or holds it in a transaction that spans an outside effect (withHeldKey).
     * 'read-only': the route writes nothing (a preview, a signed link): its answer is kept once made, and of
     * two concurrent requests with the key, the second answers the first kept answer.
     */
    idempotency?: 'atomic' | 'read-only';
  }
  interface FastifyRequest {
    idempotency?: IdempotencyState;
    /**
     * For a handler that streams its own body (a multipart upload): call once the body has been read and
     * before anything is committed. True when the request was a retry and its first response has been
     * sent; `undoStaged` has then removed what the handler staged, before that answer went out, and the
     * handler returns the reply.
     */
    settleStreamedIdempotency(reply: FastifyReply, undoStaged: () => Promise<void>): Promise<boolean>;
  }
}

/** A route option that may hold one hook or several, as an array. */
const asArray = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);

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

/**
 * A first answer again, marked as a replay. A kept error names this request's id, as every error does
 * (DECISIONS §1): the body's request_id is the x-request-id it is sent with.
 */
function markReplay(request: FastifyRequest, reply: FastifyReply, outcome: Replay): string {
  reply.header('idempotent-replayed', 'true').code(outcome.status).type('application/json; charset=utf-8');
  if (outcome.status < 400 || !outcome.body.startsWith('{')) return outcome.body;
  const answer = JSON.parse(outcome.body) as { error?: { request_id?: string } };
  if (answer.error?.request_id === undefined) return outcome.body;
  answer.error.request_id = request.id;
  return JSON.stringify(answer);
}

/**
 * Answers with the stored response (true: the reply was sent), or lets the request run with
 * request.keyedWrite: its write's transaction completes the key, or its answer is kept in onSend.
 */
async function begin(
  db: Db,
  request: FastifyRequest,
  reply: FastifyReply,
  state: IdempotencyState,
  undoStaged?: () => Promise<void>,
): Promise<boolean> {
  state.settled = true;
  if (!state.streamed) state.hash.update(canonicalJson(request.body));
  const fingerprint = state.hash.digest('hex');
  const companyId = request.principal.companyId;
  const outcome = await lookupIdempotent(db, companyId, state.key, fingerprint);
  if (outcome.kind === 'replay') {
    // What the retry staged is gone before its answer is: the client never sees it leave anything behind.
    await undoStaged?.();
    await reply.send(markReplay(request, reply, outcome));
    return true;
  }
  request.keyedWrite = {
    companyId,
    key: state.key,
    fingerprint,
    // The answer of a successful write as the route's serializer writes it, as kept for replays.
    answerOf: (data) => ({ status: 200, body: storedBody(request, reply.serialize(ok(data))) }),
  };
  return false;
}

/** Two answers that differ at most in a document number given at commit (kept as null, then written in by the database). */
function sameAnswer(kept: string, sent: string): boolean {
  if (kept === sent) return true;
  const unnumbered = sent.replace(/"(invoice|estimate|payment)_number":"(?:[^"\\]|\\.)*"/, '"$1_number":null');
  return kept === unnumbered;
}

/**
 * onSend of a keyed request: the key was completed by the write's transaction (nothing to do), or taken by
 * another request (its answer replaces this one), or not completed: a refusal, or the answer of a route
 * that writes nothing, is kept now; a server error keeps nothing, since its transaction either committed the
 * key with the work or did not commit at all.
 */
async function settleKeyedWrite(db: Db, request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const keyed = request.keyedWrite!;
  request.keyedWrite = undefined;
  const { companyId, key, fingerprint } = keyed;
  try {
    if (keyed.taken) {
      const replay = await replayOf(db, companyId, key, fingerprint);
      return replay ? markReplay(request, reply, replay) : payload;
    }
    const body = storedBody(request, payload);
    if (keyed.completed !== undefined) {
      // The answer sent is normally the one kept; should a route answer other data, the sent one is kept. An
      // error after the commit (reading a document's number) keeps the answer of the committed work.
      if (reply.statusCode < 300 && !sameAnswer(keyed.completed, body)) await replaceAnswer(db, companyId, key, body);
      return payload;
    }
    if (reply.statusCode >= 500) return payload;
    const replay = await keepAnswer(db, companyId, key, fingerprint, reply.statusCode, body);
    return replay ? markReplay(request, reply, replay) : payload;
  } catch (error) {
    // The work's outcome is decided: this only keeps (or fetches) an answer. A kept refusal that could not be
    // written lets the retry run again, which is harmless: nothing was written.
    request.log.error({ err: error }, 'idempotency answer not kept');
    return payload;
  }
}

/** request.settleStreamedIdempotency: the key of a streamed body, checked once the handler has read it. */
async function settleStreamed(db: Db, request: FastifyRequest, reply: FastifyReply, undoStaged: () => Promise<void>): Promise<boolean> {
  const state = request.idempotency;
  if (!state || state.settled) return false;
  if (!state.ended && !request.raw.readableEnded) {
    await Promise.race([once(request.raw, 'end'), new Promise((resolve) => setTimeout(resolve, END_WAIT_MS).unref())]);
  }
  if (!state.ended && !request.raw.readableEnded) throw new AppError('validation_error', 'The request body did not end.');
  return begin(db, request, reply, state, undoStaged);
}

/** JSON text of a parsed body with every object's keys sorted: one text for one value, however it was sent. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.keys(item).sort().map((key) => [key, (item as Record<string, unknown>)[key]]))
      : item,
  );
}

/** The boundary of a multipart Content-Type, or null. */
function multipartBoundary(contentType: string): string | null {
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match ? (match[1] ?? match[2]) : null;
}

/**
 * Hashes a stream with each occurrence of its multipart boundary replaced by one fixed mark. The last
 * boundary length less one byte of each chunk waits for the next, so a boundary split between chunks is
 * found too.
 */
export class BoundaryFreeHasher {
  private readonly boundary: Buffer;
  private carry = Buffer.alloc(0);

  constructor(
    private readonly hash: Hash,
    boundary: string,
  ) {
    this.boundary = Buffer.from(boundary);
  }

  update(chunk: Buffer): void {
    const data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
    let start = 0;
    for (let found = data.indexOf(this.boundary, start); found !== -1; found = data.indexOf(this.boundary, start)) {
      this.hash.update(data.subarray(start, found)).update('\0boundary\0');
      start = found + this.boundary.length;
    }
    const kept = Math.max(start, data.length - (this.boundary.length - 1));
    this.hash.update(data.subarray(start, kept));
    this.carry = Buffer.from(data.subarray(kept));
  }

  end(): void {
    this.hash.update(this.carry);
    this.carry = Buffer.alloc(0);
  }
}

/**
 * POST requests with an Idempotency-Key header run once per company and key; retries get the first
 * response back (marked with the Idempotent-Replayed header). Runs after authentication and validation,
 * so refused requests are never kept. The fingerprint is a hash of the method, the URL and the body (see
 * IdempotencyState): a retry with another body under the same key is refused.
 */
export const idempotencyPlugin = fp<{ db: Db }>(
  async (app, { db }) => {
    app.decorateRequest('settleStreamedIdempotency', function (this: FastifyRequest, reply: FastifyReply, undoStaged: () => Promise<void>) {
      return settleStreamed(db, this, reply, undoStaged);
    });

    const fingerprintBody: preParsingAsyncHookHandler = async (request, _reply, payload) => {
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
      // A parsed body is fingerprinted as it was parsed (begin), so the same fields in another order or spacing
      // are the same request.
      if (!state.streamed) return payload;
      // A listener beside the handler's multipart parser sees every chunk it reads; paused so that nothing
      // flows before the parser starts it. The boundary, which a client picks anew for each send, is left out.
      const boundary = multipartBoundary(request.headers['content-type'] ?? '');
      const hasher = boundary ? new BoundaryFreeHasher(state.hash, boundary) : null;
      payload.on('data', (chunk: Buffer) => (hasher ? hasher.update(chunk) : state.hash.update(chunk)));
      payload.once('end', () => {
        hasher?.end();
        state.ended = true;
      });
      payload.pause();
      return payload;
    };

    const replayOrRun: preHandlerAsyncHookHandler = async (request, reply) => {
      const state = request.idempotency;
      // A body the handler streams is fingerprinted once the handler has read it (request.settleStreamedIdempotency).
      if (!state || state.streamed) return;
      // Parsed bodies have been read whole by now; a POST without a body hashes as empty.
      if (await begin(db, request, reply, state)) return reply;
    };

    // The hooks belong to the POSTs alone, so a GET runs none of them. A POST that would run its work before
    // its key is kept, or keep no key, cannot be added.
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      if (!methods.includes('POST')) return;
      if (!route.config?.idempotency) throw new Error(`POST ${route.url} must say how it keeps its Idempotency-Key (config.idempotency)`);
      route.preParsing = [...asArray(route.preParsing), fingerprintBody];
      route.preHandler = [replayOrRun, ...asArray(route.preHandler)];
    });

    // Global, in its place among the other onSend hooks; synchronous for a request without a keyed write.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (!request.keyedWrite) return done(null, payload);
      settleKeyedWrite(db, request, reply, payload).then((settled) => done(null, settled), done);
    });
  },
  { name: 'idempotency' },
);
