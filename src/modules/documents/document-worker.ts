import { icalFeed, type CalendarInput } from './calendar-text.js';
import { renderDocumentPdf } from './document-pdf.js';
import type { CustomerDocument } from './document-view.js';
import { estimatePage, invoicePage, type PageOptions } from './share-page.js';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The niceness of a render process where its threads cannot be given the idle policy. */
const RENDER_NICENESS = 10;

/**
 * Gives every thread of this render process the lowest scheduling priority (DECISIONS §11: a company rendering
 * large documents must not slow another company's requests). Linux schedules threads as tasks, and the
 * runtime's threads (garbage collection, compilation) exist before this module runs, so each is set; threads
 * started later inherit the setting of the thread that starts them.
 *
 * First choice, the SCHED_IDLE policy (through util-linux's `chrt`; lowering one's own priority needs no
 * privilege): the kernel treats a core that runs only such tasks as idle, so a server thread or a database
 * backend that wakes takes it at once. A niceness (10) leaves a render its share of each core while the event
 * loop waits on the database, and measured twice the idle policy's effect on the other requests' slowest times
 * (bench/README.md). Where `chrt` is missing the niceness is used; where neither is allowed the renders run at
 * the server's priority.
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
  try {
    execFileSync('chrt', ['--idle', '--all-tasks', '--pid', '0', String(process.pid)], { stdio: 'ignore', timeout: 5_000 });
  } catch {
    // No chrt (or not Linux): the niceness above stays.
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
