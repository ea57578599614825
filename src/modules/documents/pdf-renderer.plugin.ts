import fp from 'fastify-plugin';
import { PdfRenderer } from './pdf-renderer.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Renders document PDFs off the event loop (PDF_RENDER_THREADS, PDF_RENDER_QUEUE, PDF_CACHE_BYTES). */
    pdfRenderer: PdfRenderer;
  }
}

/** The app's one PDF pool, shared by the API's and the share pages' PDF routes and by sends; closed with the app. */
export const pdfRendererPlugin = fp(
  async (app) => {
    const { config } = app.deps;
    const renderer = new PdfRenderer({
      threads: config.PDF_RENDER_THREADS,
      queue: config.PDF_RENDER_QUEUE,
      cacheBytes: config.PDF_CACHE_BYTES,
    });
    app.decorate('pdfRenderer', renderer);
    app.addHook('onClose', async () => renderer.close());
  },
  { name: 'pdf-renderer' },
);
