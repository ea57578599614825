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
}

/** The actor of a request: its principal plus the If-Match header of a conditional write. */
export function actorOf(request: FastifyRequest): Actor {
  const { companyId, userId, mode } = request.principal;
  return { companyId, userId, ifMatch: request.headers['if-match'], ...(mode === 'test' ? { testMode: true } : {}) };
}
