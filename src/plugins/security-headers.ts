import fp from 'fastify-plugin';

/**
 * Headers on every answer: the request id, the browser-hardening headers and no caching unless a route
 * says otherwise; while shutting down, answers close their connection so the server can exit promptly.
 */
export const securityHeadersPlugin = fp(
  async (app) => {
    // One synchronous hook; the request id is set here too, as every answer passes through onSend.
    app.addHook('onSend', (request, reply, payload, done) => {
      reply.header('x-request-id', request.id);
      if (app.lifecycle.shuttingDown) reply.header('connection', 'close');
      reply.header('x-content-type-options', 'nosniff');
      reply.header('x-frame-options', 'DENY');
      reply.header('referrer-policy', 'no-referrer');
      if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      done(null, payload);
    });
  },
  { name: 'security-headers', dependencies: ['lifecycle'] },
);
