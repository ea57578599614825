import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { getHtmlDocument, type HtmlRenderingConfiguration } from '@scalar/core/libs/html-rendering';

/**
 * The interactive reference at /docs: Scalar's page over this server's OpenAPI document.
 *
 * The page's 3.5 MB script is streamed from the package's file on each (cacheable) request instead of being
 * held in memory: read as a string it kept 7 MiB of every instance's heap, for a page most instances never serve.
 */
const SCRIPT_FILE = fileURLToPath(new URL('./js/standalone.js', import.meta.resolve('@scalar/fastify-api-reference')));

const PREFIX = '/docs';
const hidden = { schema: { hide: true } } as const;

/**
 * The page loads only what this server serves: its script, the document and inline styles. The one inline
 * script (the page's configuration) is allowed by its hash. No upgrade-insecure-requests: the page must work
 * over plain HTTP on any host name (a LAN address, a container name), not only localhost.
 */
function pageCsp(html: string): string {
  const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
    (match) => `'sha256-${createHash('sha256').update(match[1], 'utf8').digest('base64')}'`,
  );
  return [
    "default-src 'self'",
    `script-src 'self' ${hashes.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Registers /docs/ (the page; /docs redirects to it), /docs/js/scalar.js and the page's copies of the document. */
export function registerApiReference(app: FastifyInstance, configuration: Partial<HtmlRenderingConfiguration>): void {
  let page: { html: string; csp: string } | undefined;
  const renderPage = () => {
    // The script and the document are relative to the page, so it works behind any prefix or proxy.
    const html = getHtmlDocument({ ...configuration, cdn: 'js/scalar.js', url: './openapi.json' });
    return { html, csp: pageCsp(html) };
  };
  const noIndex = { 'x-robots-tag': 'noindex' };

  // The server ignores trailing slashes, so this route answers /docs too: that one is sent to /docs/, where the
  // page's relative links resolve under /docs.
  app.get(`${PREFIX}/`, hidden, async (request, reply) => {
    if (!request.url.split('?')[0].endsWith('/')) return reply.headers(noIndex).redirect(`${PREFIX}/`, 301);
    page ??= renderPage();
    return reply
      .headers(noIndex)
      .header('content-security-policy', page.csp)
      .type('text/html; charset=utf-8')
      .send(page.html);
  });
  app.get(`${PREFIX}/js/scalar.js`, hidden, async (_request, reply) =>
    reply
      .headers(noIndex)
      // The bundled script changes only with the package version; let browsers keep it for a day.
      .header('cache-control', 'public, max-age=86400')
      .type('application/javascript; charset=utf-8')
      .send(createReadStream(SCRIPT_FILE)),
  );
  app.get(`${PREFIX}/openapi.json`, hidden, async (_request, reply) =>
    reply.headers(noIndex).header('content-disposition', 'filename=openapi.json').type('application/json').send(app.swagger()),
  );
  app.get(`${PREFIX}/openapi.yaml`, hidden, async (_request, reply) =>
    reply.headers(noIndex).header('content-disposition', 'filename=openapi.yaml').type('application/yaml').send(app.swagger({ yaml: true })),
  );
}
