import { renderDocumentPdf } from './document-pdf.js';
import type { CustomerDocument } from './document-view.js';
import { estimatePage, invoicePage, type PageOptions } from './share-page.js';

/** A worker thread of the document pool (document-renderer.ts): lays out one document and answers its PDF bytes. */
export default async function renderPdf(document: CustomerDocument): Promise<Uint8Array> {
  return renderDocumentPdf(document);
}

/** The customer page of a large document, built here so its size never holds the event loop. */
export function renderPage({ document, options }: { document: CustomerDocument; options: PageOptions }): string {
  return document.kind === 'estimate' ? estimatePage(document, options) : invoicePage(document, options);
}
