import type { FastifyRequest } from 'fastify';

/** Who calls and what they may do: the types every layer shares (the auth plugin fills them in). */

export type Addon = 'photos' | 'numbering';

/** live: the company's data; test: the company's sandbox (DECISIONS §12). */
export type Mode = 'live' | 'test';

/** The authenticated API key: the data it works on, its user, its scopes and the company's add-ons. */
export interface Principal {
  /** The company whose data the request sees: the key's company, or that company's sandbox for a test key. */
  companyId: string;
  /** The company the key belongs to (the live one, for a test key too): keys are managed there. */
  keyCompanyId: string;
  mode: Mode;
  userId: string;
  apiKeyId: string;
  /** The public prefix of the secret presented (never the secret): names the key in logs and in the admin CLI. */
  keyPrefix: string;
  /** `*`, or the `<area>:read|write` scopes the key holds (src/auth/scopes.ts). */
  scopes: ReadonlySet<string>;
  addons: ReadonlySet<string>;
}

/**
 * Who performs a write: the key's company and user, and the request's If-Match header as sent (checked by
 * the write path under the record's row lock with assertIfMatch, src/shared/etag.ts; absent means
 * unconditional).
 */
export interface Actor {
  companyId: string;
  userId: string;
  ifMatch?: string | string[];
  /** A test key's write in the sandbox: what would leave the API (an email) is answered but not done. */
  testMode?: boolean;
  /** A POST with an Idempotency-Key no request has completed yet: its write completes the key (src/shared/keyed-writes.ts). */
  idempotency?: KeyedWrite;
}

/**
 * The Idempotency-Key of a write, handed from the idempotency plugin to the write path. The write's
 * transaction inserts the key's completed row (its answer) before it commits, so the key and the work
 * commit together or not at all; a concurrent request with the same key waits on the row's unique index.
 */
export interface KeyedWrite {
  companyId: string;
  key: string;
  fingerprint: string;
  /** The answer a successful write with this data sends, as kept for replays (status and body text). */
  answerOf(data: unknown): { status: number; body: string };
  /** Set by the transaction that wrote the key's completion: the answer it kept. */
  completed?: string;
  /**
   * Set when the write found the key completed by another request, whose answer is then this one's, or still
   * held by one (a 409 that is not kept).
   */
  taken?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's Idempotency-Key while its write has not completed it (src/plugins/idempotency.ts). */
    keyedWrite?: KeyedWrite;
  }
}

/** The actor of a request: its principal plus the If-Match header of a conditional write. */
export function actorOf(request: FastifyRequest): Actor {
  const { companyId, userId, mode } = request.principal;
  const actor: Actor = { companyId, userId, ifMatch: request.headers['if-match'], ...(mode === 'test' ? { testMode: true } : {}) };
  if (request.keyedWrite) actor.idempotency = request.keyedWrite;
  return actor;
}
