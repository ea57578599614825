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

/** The request options a pooled connection is chosen by: the address checked for this attempt as well. */
type PinnedOptions = http.ClientRequestArgs & { pinnedAddress?: string };

/**
 * Connections to receivers are kept open and reused between attempts: a new connection per delivery
 * leaves a socket in TIME_WAIT each time, and at a few thousand deliveries a second that exhausted the
 * local ports and stalled delivery. A pooled connection is reused only for the same host, port and
 * checked address, so an attempt never sends over a connection to an address it did not check. Idle
 * connections close after a few seconds, before a typical receiver's own keep-alive timeout.
 */
const IDLE_MS = 4_000;

class PinnedHttpAgent extends http.Agent {
  override getName(options: PinnedOptions = {}): string {
    return `${super.getName(options)}|${options.pinnedAddress ?? ''}`;
  }
}

class PinnedHttpsAgent extends https.Agent {
  override getName(options: PinnedOptions = {}): string {
    return `${super.getName(options)}|${options.pinnedAddress ?? ''}`;
  }
}

const agents = {
  'http:': new PinnedHttpAgent({ keepAlive: true, timeout: IDLE_MS }),
  'https:': new PinnedHttpsAgent({ keepAlive: true, timeout: IDLE_MS }),
};

/**
 * A kept connection the receiver closed just as it was reused fails before any answer; the attempt is then
 * sent again, this many times at most, each time on another kept connection or a new one. The receiver
 * saw at most an incomplete request (webhook-id lets it drop a repeat either way).
 */
const STALE_CONNECTION_RETRIES = 2;

/**
 * POSTs the body and answers the receiver's status as soon as it is known. Redirects are not followed
 * (node's client never does); the response body is read to the end and discarded, so the connection can
 * serve the next attempt.
 */
export async function postWebhook(request: WebhookRequest): Promise<number> {
  for (let retry = 0; ; retry++) {
    try {
      return await postOnce(request);
    } catch (error) {
      const stale = error instanceof StaleConnectionError;
      if (!stale || retry >= STALE_CONNECTION_RETRIES || request.signal.aborted) throw stale ? error.cause : error;
    }
  }
}

/** The request failed on a reused connection before the receiver answered. */
class StaleConnectionError extends Error {}

function postOnce(request: WebhookRequest): Promise<number> {
  const secure = request.url.protocol === 'https:';
  const client = secure ? https : http;
  const options: PinnedOptions & https.RequestOptions = {
    method: 'POST',
    headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
    lookup: pinnedLookup(request.address, request.family),
    agent: secure ? agents['https:'] : agents['http:'],
    pinnedAddress: request.address,
    signal: request.signal,
  };
  return new Promise<number>((resolve, reject) => {
    let answered = false;
    const outgoing = client.request(request.url, options, (response) => {
      answered = true;
      response.on('error', () => undefined);
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      const staleConnection = outgoing.reusedSocket && !answered && error.code === 'ECONNRESET';
      reject(staleConnection ? new StaleConnectionError('stale kept connection', { cause: error }) : error);
    });
    outgoing.end(request.body);
  });
}
