import { renderDocumentPdf } from './document-pdf.js';
import type { CustomerDocument } from './document-view.js';

/** A worker thread of the PDF pool (pdf-renderer.ts): lays out one document and answers its bytes. */
export default async function renderPdf(document: CustomerDocument): Promise<Uint8Array> {
  return renderDocumentPdf(document);
}
