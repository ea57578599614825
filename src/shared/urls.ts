import { invalidField } from '../errors.js';

/** URL helpers with no I/O: the base of absolute links, and URLs made safe to log. */

/** A host name (its labels may hold underscores, as container and service names do: crm_api), or a bracketed IPv6 address; an optional port. */
const HOST_PATTERN = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The origin absolute links (photo and share links) are built on: PUBLIC_BASE_URL when set, else the
 * request's protocol and host. Those come from Host / X-Forwarded-* headers, so only http or https and a
 * plain host name or address (with an optional port) are accepted; anything else gives null.
 */
export function linkBase(publicBaseUrl: string | undefined, protocol: string, host: string): string | null {
  if (publicBaseUrl) return publicBaseUrl.replace(/\/+$/, '');
  if (protocol !== 'http' && protocol !== 'https') return null;
  if (!HOST_PATTERN.test(host)) return null;
  return `${protocol}://${host}`;
}

/**
 * The base of every absolute link a request answers with (photo links, share links): 400 when it would
 * come from a Host / X-Forwarded-* header that is not a plain http(s) host.
 */
export function requestLinkBase(request: { protocol: string; host: string }, publicBaseUrl: string | undefined): string {
  const base = linkBase(publicBaseUrl, request.protocol, request.host);
  if (base === null) {
    throw invalidField('Host', 'must be a plain http or https host name (links are built from it)', 'invalid_format');
  }
  return base;
}

/** Query parameters whose values are secrets: link signatures, tokens, presigned-URL credentials. */
const SECRET_PARAMS = /^(?:signature|sig|token|access_token|api_key|apikey|key|x-amz-signature|x-amz-credential|x-amz-security-token)$/i;
/** A path segment that looks like a token (long, random), not a UUID or a word. */
const TOKEN_SEGMENT = /^(?![0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:\.[a-z0-9]+)?$)[A-Za-z0-9_.~%-]{32,}$/i;

/** The URL with secret query values and token-like path segments replaced, for logs. */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = queryAt === -1 ? '' : url.slice(queryAt + 1);
  const safePath = path
    .split('/')
    .map((segment) => (TOKEN_SEGMENT.test(segment) ? '[redacted]' : segment))
    .join('/');
  if (queryAt === -1) return safePath;
  const safeQuery = query
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // keep the raw name
      }
      return equals !== -1 && SECRET_PARAMS.test(decoded) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${safePath}?${safeQuery}`;
}
