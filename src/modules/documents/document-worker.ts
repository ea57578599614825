import { icalFeed, type CalendarInput } from './calendar-text.js';
import { renderDocumentPdf } from './document-pdf.js';
import type { CustomerDocument } from './document-view.js';
import { estimatePage, invoicePage, type PageOptions } from './share-page.js';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The niceness of a rendering thread: renders wait while the event loops that answer requests need the CPU. */
const RENDER_NICENESS = 10;

/**
 * Lowers this worker thread's scheduling priority (DECISIONS §11: a company rendering large documents must
 * not slow another company's requests). Linux schedules threads as tasks, so the thread's own id takes a
 * niceness of its own; elsewhere, or where it is not allowed, the thread keeps the process's priority.
 */
function yieldToRequests(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(threadId) && threadId > 0) setPriority(threadId, RENDER_NICENESS);
  } catch {
    // Not Linux, or not permitted: the renders run at the process's priority.
  }
}
yieldToRequests();

/** A worker thread of the document pool (document-renderer.ts): lays out one document and answers its PDF bytes. */
export default async function renderPdf(document: CustomerDocument): Promise<Uint8Array> {
  return renderDocumentPdf(document);
}

/** The customer page of a large document, built here so its size never holds the event loop. */
export function renderPage({ document, options }: { document: CustomerDocument; options: PageOptions }): string {
  return document.kind === 'estimate' ? estimatePage(document, options) : invoicePage(document, options);
}

/** A large calendar feed, written here so its size never holds the event loop. */
export function renderCalendar(input: CalendarInput): string {
  return icalFeed(input);
}
