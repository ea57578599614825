import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import { validationError } from '../errors.js';

/**
 * What the HTTP server does with a connection before a request reaches a route. Node answers some requests
 * itself, outside the error envelope and without an x-request-id; these rules hand them to the application
 * instead, or bound what a client may hold.
 */

/** Node's server fields these rules set; they are read per request and missing from @types/node. */
interface NodeServerSettings {
  connectionsCheckingInterval?: number;
  httpAllowHalfOpen?: boolean;
  requireHostHeader?: boolean;
}

export function applyConnectionRules(server: Server, requestTimeoutMs: number): void {
  const settings = server as Server & NodeServerSettings;
  closeSilentConnections(server, requestTimeoutMs);
  // Node checks requestTimeout every 30 s by default, so a request could trickle in for that much longer than
  // REQUEST_TIMEOUT_MS; checked every twentieth of it (1 to 5 s), the bound holds within a few seconds.
  // Settable until the server listens.
  if (requestTimeoutMs > 0) settings.connectionsCheckingInterval = Math.min(5_000, Math.max(1_000, Math.round(requestTimeoutMs / 20)));
  // A client that sends its request and then half-closes (`printf ... | nc`) still gets the answer, then the
  // connection closes. Node's default drops the request unanswered.
  settings.httpAllowHalfOpen = true;
  // Node answers an HTTP/1.1 request without Host with a bare 400; hostRequiredPlugin answers it in the envelope.
  settings.requireHostHeader = false;
  // An Expect other than 100-continue is ignored, as RFC 9110 §10.1.1 allows, instead of Node's bare 417:
  // the request is answered like any other.
  server.on('checkExpectation', (request, response) => server.emit('request', request, response));
}

/**
 * A connection that sends nothing for `ms` after it opens is closed: requestTimeout starts only with a
 * request's first byte, so a silent connection would otherwise be held for good. Once it has sent a byte,
 * requestTimeout and keepAliveTimeout take over; a request the server is still answering is never cut.
 */
function closeSilentConnections(server: Server, ms: number): void {
  if (ms <= 0) return;
  server.on('connection', (socket: Socket) => {
    // bytesRead, not a 'data' listener: one would take the socket off Node's native HTTP parsing.
    const timer = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy();
    }, ms);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}

/** An HTTP/1.1 request must name its Host (RFC 9112 §3.2): 400 in the envelope, naming the header. */
export const hostRequiredPlugin = fp(
  async (app) => {
    app.addHook('onRequest', (request, _reply, done) => {
      if (request.headers.host !== undefined || request.raw.httpVersion !== '1.1') return done();
      done(validationError([{ field: 'Host', code: 'required', message: 'is required in an HTTP/1.1 request' }], 'headers'));
    });
  },
  { name: 'host-required', dependencies: ['errors'] },
);
