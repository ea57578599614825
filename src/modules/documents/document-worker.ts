import { icalFeed, type CalendarInput } from './calendar-text.js';
import { renderDocumentPdf } from './document-pdf.js';
import type { CustomerDocument } from './document-view.js';
import { estimatePage, invoicePage, type PageOptions } from './share-page.js';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The niceness of a render process: renders wait while the event loops that answer requests need the CPU. */
const RENDER_NICENESS = 10;

/**
 * Lowers the scheduling priority of every thread of this render process (DECISIONS §11: a company rendering
 * large documents must not slow another company's requests). Linux schedules threads as tasks, each with a
 * niceness of its own, and the runtime's threads (garbage collection, compilation) exist before this module
 * runs, so each is set by its id; threads started later inherit the niceness of the thread that starts them.
 * Elsewhere, or where it is not allowed, the renders run at the server's priority.
 */
function yieldToRequests(): void {
  let threadIds: number[];
  try {
    threadIds = readdirSync('/proc/self/task').map(Number);
  } catch {
    threadIds = [0];
  }
  for (const threadId of threadIds) {
    try {
      if (Number.isInteger(threadId)) setPriority(threadId, RENDER_NICENESS);
    } catch {
      // Not permitted: this thread keeps its priority.
    }
  }
}
yieldToRequests();

/** A render process of the document pool (document-renderer.ts): lays out one document and answers its PDF bytes. */
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

/** Does nothing: what the renderer hands the pool to have it start a process (DocumentRenderer.restart). */
export function ready(): null {
  return null;
}
