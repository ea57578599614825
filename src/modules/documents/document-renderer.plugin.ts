import fp from 'fastify-plugin';
import { DocumentRenderer } from './document-renderer.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Renders document PDFs and large pages off the event loop (PDF_RENDER_THREADS, PDF_RENDER_QUEUE, PDF_CACHE_BYTES). */
    documentRenderer: DocumentRenderer;
  }
}

/** The app's one rendering pool, shared by the API's and the share pages' routes and by sends; closed with the app. */
export const documentRendererPlugin = fp(
  async (app) => {
    const { config } = app.deps;
    const renderer = new DocumentRenderer({
      threads: config.PDF_RENDER_THREADS,
      queue: config.PDF_RENDER_QUEUE,
      cacheBytes: config.PDF_CACHE_BYTES,
      onProcessLost: (error) => app.log.warn({ err: error }, 'a render process ended while idle or starting up; a new one takes its place'),
    });
    app.decorate('documentRenderer', renderer);
    app.addHook('onClose', async () => renderer.close());
  },
  { name: 'document-renderer' },
);
