import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

export interface WebhookRequest {
  url: URL;
  /** The checked address to connect to; Host and TLS SNI keep the url's host name. */
  address: string;
  family: 4 | 6;
  headers: Record<string, string>;
  body: string;
  /** Aborts the request (attempt timeout, shutdown). */
  signal: AbortSignal;
}

/** A lookup that answers the pinned address whatever the name, so the socket reaches what was checked. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/**
 * POSTs the body once and answers the receiver's status as soon as it is known. Redirects are not
 * followed (node's client never does); the response body is discarded.
 */
export function postWebhook(request: WebhookRequest): Promise<number> {
  const client = request.url.protocol === 'https:' ? https : http;
  return new Promise<number>((resolve, reject) => {
    const outgoing = client.request(
      request.url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        lookup: pinnedLookup(request.address, request.family),
        // A fresh connection per attempt: a pooled socket could outlive the address check it was made under.
        agent: false,
        signal: request.signal,
      },
      (response) => {
        response.on('error', () => undefined);
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}
