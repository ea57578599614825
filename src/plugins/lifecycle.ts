import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether the server is shutting down: /readyz answers 503 and answers close their connection. */
    lifecycle: { readonly shuttingDown: boolean; beginShutdown(): void };
  }
}

/** The app's shutdown state, owned here and read through app.lifecycle. */
export const lifecyclePlugin = fp(
  async (app) => {
    let shuttingDown = false;
    app.decorate('lifecycle', {
      get shuttingDown() {
        return shuttingDown;
      },
      beginShutdown() {
        shuttingDown = true;
      },
    });
  },
  { name: 'lifecycle' },
);
