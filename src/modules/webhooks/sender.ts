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

/** The most of a receiver's answer an attempt reads (DECISIONS §11); past it the connection is closed. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** The most of an answer's body the delivery log keeps. */
export const LOGGED_ANSWER_BYTES = 1024;

export interface WebhookAnswer {
  /** The receiver's HTTP status: it alone decides the attempt. */
  status: number;
  /** The first LOGGED_ANSWER_BYTES of the body, as text. */
  body: string;
}

/**
 * POSTs the body and reads the receiver's answer: its status, and at most MAX_ANSWER_BYTES of its body
 * until the request's signal ends the attempt (WEBHOOK_TIMEOUT_MS from its start, or a shutdown). An
 * answer cut short there, or longer, closes its connection; a complete one leaves the connection to serve
 * the next attempt. Redirects are not followed (node's client never does).
 */
export async function postWebhook(request: WebhookRequest): Promise<WebhookAnswer> {
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

/** The kept start of a body as text a text column can hold: incomplete trailing characters dropped, no NUL. */
function loggedText(bytes: Buffer): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes, { stream: true }).replaceAll('\u0000', '\ufffd');
}

function postOnce(request: WebhookRequest): Promise<WebhookAnswer> {
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
  return new Promise<WebhookAnswer>((resolve, reject) => {
    let answered = false;
    const outgoing = client.request(request.url, options, (response) => {
      answered = true;
      const status = response.statusCode ?? 0;
      const kept: Buffer[] = [];
      let keptBytes = 0;
      let readBytes = 0;
      response.on('data', (chunk: Buffer) => {
        readBytes += chunk.length;
        if (keptBytes < LOGGED_ANSWER_BYTES) {
          const part = chunk.subarray(0, LOGGED_ANSWER_BYTES - keptBytes);
          kept.push(part);
          keptBytes += part.length;
        }
        // Destroying the answer closes its connection, which is then never reused.
        if (readBytes > MAX_ANSWER_BYTES) response.destroy();
      });
      response.on('error', () => undefined);
      // After the end of a complete body, or once the body was cut: too long, past the deadline, interrupted.
      response.on('close', () => resolve({ status, body: loggedText(Buffer.concat(kept)) }));
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      // Once the status is in, an error only cuts the body: the answer's close reports what was read.
      if (answered) return;
      const staleConnection = outgoing.reusedSocket && error.code === 'ECONNRESET';
      reject(staleConnection ? new StaleConnectionError('stale kept connection', { cause: error }) : error);
    });
    outgoing.end(request.body);
  });
}
