import type { FastifyRequest } from 'fastify';

/** Who calls and what they may do: the types every layer shares (the auth plugin fills them in). */

export type Addon = 'photos' | 'numbering';

/** The authenticated API key: its company, its user and the company's add-ons. */
export interface Principal {
  companyId: string;
  userId: string;
  apiKeyId: string;
  /** The key's public prefix (never the key): names the key in logs and in the admin CLI. */
  keyPrefix: string;
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
}

/** The actor of a request: its principal plus the If-Match header of a conditional write. */
export function actorOf(request: FastifyRequest): Actor {
  const { companyId, userId } = request.principal;
  return { companyId, userId, ifMatch: request.headers['if-match'] };
}
