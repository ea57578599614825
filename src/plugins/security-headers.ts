import fp from 'fastify-plugin';

/**
 * Headers on every answer: the request id, the browser-hardening headers and no caching unless a route
 * says otherwise; while shutting down, answers close their connection so the server can exit promptly.
 */
export const securityHeadersPlugin = fp(
  async (app) => {
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-request-id', request.id);
    });
    app.addHook('onSend', async (_request, reply) => {
      if (app.lifecycle.shuttingDown) reply.header('connection', 'close');
      reply.header('x-content-type-options', 'nosniff');
      reply.header('x-frame-options', 'DENY');
      reply.header('referrer-policy', 'no-referrer');
      reply.header('cache-control', reply.getHeader('cache-control') ?? 'no-store');
    });
  },
  { name: 'security-headers', dependencies: ['lifecycle'] },
);
