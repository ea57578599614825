import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tinypool } from 'tinypool';
import { AppError } from '../../errors.js';
import { CompanyLines } from '../../shared/company-lines.js';
import { etagOf } from '../../shared/etag.js';
import { icalFeed, type CalendarInput } from './calendar-text.js';
import type { CustomerDocument } from './document-view.js';
import { estimatePage, invoicePage, type PageOptions } from './share-page.js';

export interface DocumentRendererOptions {
  /** Render processes (PDF_RENDER_THREADS). */
  threads: number;
  /** Documents waiting for a thread at most (PDF_RENDER_QUEUE); past it a render is refused with 503. */
  queue: number;
  /** Bytes of rendered PDFs kept (PDF_CACHE_BYTES); 0 keeps none. */
  cacheBytes: number;
  /** How long an idle render process lives before it exits and frees its memory. */
  idleTimeoutMs?: number;
  /** Told when a render process ended unexpectedly (killed, out of memory) while idle or starting up. */
  onProcessLost?: (error: Error) => void;
}

/** Seconds a client refused by a full queue is asked to wait (Retry-After). */
const BUSY_RETRY_AFTER_SECONDS = 2;

/**
 * Pages of at most this many table rows (line items, add-ons) are built on the event loop, in a few
 * milliseconds at the longest row text; larger ones go to the pool like PDFs.
 */
const INLINE_PAGE_ROWS = 200;

/**
 * What writing a calendar feed costs, in characters: ical-generator takes about 0.3 ms a visit and 1 us a
 * character of its text (folded and escaped), so a visit counts as 250 characters. Feeds up to
 * INLINE_CALENDAR_WORK (a few milliseconds) are written on the event loop; larger ones go to the pool.
 */
function calendarWork(input: CalendarInput): number {
  let work = 0;
  for (const visit of input.visits) {
    work += 250 + (visit.instructions?.length ?? 0) + (visit.title?.length ?? 0) + visit.jobTitle.length + (visit.address1?.length ?? 0) + (visit.address2?.length ?? 0);
  }
  return work;
}
const INLINE_CALENDAR_WORK = 5_000;

/**
 * 503 with Retry-After: every render process is busy and the queue (or the company's share of it) is full, or
 * the processes rendering this document stopped twice (killed, out of memory) and a new one takes their place.
 */
export class RendererUnavailableError extends AppError {
  override readonly retryAfterSeconds = BUSY_RETRY_AFTER_SECONDS;

  constructor(message = `Too many documents are being rendered; retry in ${BUSY_RETRY_AFTER_SECONDS} s.`) {
    super('service_unavailable', message);
  }
}

/** What the pool rejects a task with when its queue is full. */
const QUEUE_FULL = /^(Task queue is at limit|No task queue available)/;
/** What the pool rejects a task with when its render process ended under it. */
const PROCESS_ENDED = /^(Worker exited unexpectedly|Terminating worker thread|Channel closed)/;
/** What writing to a render process that has just ended fails with. */
const PROCESS_GONE_CODES = new Set(['EPIPE', 'ECONNRESET', 'ERR_IPC_CHANNEL_CLOSED']);

/** Whether a task failed because its render process ended under it (not because of the document). */
function processEnded(error: unknown): boolean {
  return error instanceof Error && (PROCESS_ENDED.test(error.message) || PROCESS_GONE_CODES.has((error as NodeJS.ErrnoException).code ?? ''));
}
/** What the pool rejects a queued task with when restart() gave up on starting a process for it. */
const CANCELLED = /^The task has been cancelled/;

/**
 * The worker module beside this one: document-worker.ts under tsx (tests, development), which the render
 * process loads through tsx as well, or the compiled document-worker.js of dist/ (the image).
 */
function workerModule(): { filename: string; execArgv: string[] } {
  const extension = extname(fileURLToPath(import.meta.url));
  const filename = new URL(`./document-worker${extension}`, import.meta.url).href;
  return { filename, execArgv: extension === '.ts' ? ['--import', 'tsx'] : [] };
}

/** The environment of a render process: this one's (a child started with none would lose PATH, NODE_OPTIONS and the like). */
function childEnvironment(): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) environment[name] = value;
  return environment;
}

/** Rendered PDFs by the hash of everything they show, the least recently used dropped first past the byte bound. */
class PdfCache {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): Buffer | undefined {
    const pdf = this.entries.get(key);
    if (pdf) {
      this.entries.delete(key);
      this.entries.set(key, pdf);
    }
    return pdf;
  }

  set(key: string, pdf: Buffer): void {
    if (pdf.length > this.maxBytes || this.entries.has(key)) return;
    this.entries.set(key, pdf);
    this.bytes += pdf.length;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.length;
    }
  }
}

function tableRows(document: CustomerDocument): number {
  return document.kind === 'invoice' ? (document.invoice.line_items?.length ?? 1) : document.template.addons.length + 1;
}

/**
 * Renders documents in a small pool of child processes, so a large one never stalls the event loop that
 * serves every other request (DECISIONS §11): every PDF, the customer pages of large documents and large
 * calendar feeds. A process rather than a thread, because every thread of a render process (its garbage
 * collector's too, which a worker thread shares with the event loop's) runs at a lower priority
 * (document-worker.ts), and its memory is given back whole when it exits after a minute idle. The
 * queue is bounded: when it is full a render is refused at once (503 with Retry-After) instead of
 * waiting without end, and one company may hold at most a quarter of it, so a company rendering many
 * documents fills its own share and the others' renders still queue. A company's renders beyond its share
 * wait in a line of the company's own (at most PDF_RENDER_QUEUE long; 503 beyond), each entering the pool
 * as one of the company's renders ends: a client fetching many PDFs at once is served in turn, not refused.
 * A PDF is cached under the hash of its whole view model (the record and everything else the PDF shows),
 * so a cached copy is never stale, and concurrent requests for the same content share one render.
 */
export class DocumentRenderer {
  private readonly pool: Tinypool;
  /** Tasks handed to the pool and not yet settled, which close() waits for. */
  private readonly inPool = new Set<Promise<unknown>>();
  private readonly cache: PdfCache;
  private readonly rendering = new Map<string, Promise<Buffer>>();
  /** Renders handed to the pool (waiting there or running) per company, at most a quarter of processes and queue. */
  private readonly companies: CompanyLines;
  private closing = false;
  /** Processes that ended with renders queued and no task succeeding since; restart() gives up at two. */
  private startsFailedInARow = 0;

  constructor(private readonly options: DocumentRendererOptions) {
    this.pool = new Tinypool({
      ...workerModule(),
      runtime: 'child_process',
      // Structured clone over the IPC channel, so a PDF's bytes arrive as bytes.
      serialization: 'advanced',
      env: childEnvironment(),
      // No process until the first render: the layout engine and its fonts stay out of instances that make none.
      minThreads: 0,
      maxThreads: options.threads,
      // One slot beyond the bound run() keeps, for the task that starts a new process (restart() below).
      maxQueue: options.queue + 1,
      idleTimeout: options.idleTimeoutMs ?? 60_000,
    });
    // A process that ends with renders on it fails those renders (503 below); one that ends idle is reported
    // here, and must be listened for: an unheard 'error' event would end the server.
    this.pool.on('error', (error: Error) => {
      options.onProcessLost?.(error);
      this.restart();
    });
    this.cache = new PdfCache(options.cacheBytes);
    this.companies = new CompanyLines(Math.max(1, Math.floor((options.threads + options.queue) / 4)), options.queue);
  }

  /** The PDF of a document of `companyId`, from the cache when its content is unchanged. */
  async pdf(document: CustomerDocument, companyId: string): Promise<Buffer> {
    const key = etagOf(document);
    const cached = this.cache.get(key);
    if (cached) return cached;
    let pending = this.rendering.get(key);
    if (!pending) {
      pending = this.run(companyId, async () => {
        const bytes = (await this.inPoolRun(document)) as Uint8Array;
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      }).finally(() => this.rendering.delete(key));
      this.rendering.set(key, pending);
    }
    const pdf = await pending;
    this.cache.set(key, pdf);
    return pdf;
  }

  /** The customer page of a document: on the event loop when it is small, in the pool when it is large. */
  async page(document: CustomerDocument, options: PageOptions, companyId: string): Promise<string> {
    if (tableRows(document) <= INLINE_PAGE_ROWS) {
      return document.kind === 'estimate' ? estimatePage(document, options) : invoicePage(document, options);
    }
    return this.run(companyId, async () => (await this.inPoolRun({ document, options }, 'renderPage')) as string);
  }

  /** A technician's calendar feed (RFC 5545 text): on the event loop when it is small, in the pool when it is large. */
  async calendar(input: CalendarInput, companyId: string): Promise<string> {
    if (calendarWork(input) <= INLINE_CALENDAR_WORK) return icalFeed(input);
    return this.run(companyId, async () => (await this.inPoolRun(input, 'renderCalendar')) as string);
  }

  /** Runs a task in the pool within the company's share and the queue's bound. */
  private async run<T>(companyId: string, task: () => Promise<T>): Promise<T> {
    await this.admit(companyId);
    try {
      return await task();
    } catch (error) {
      if (error instanceof Error && QUEUE_FULL.test(error.message)) throw new RendererUnavailableError();
      if (processEnded(error) || (error instanceof Error && CANCELLED.test(error.message))) {
        throw new RendererUnavailableError(`The document renderer stopped during this render; retry in ${BUSY_RETRY_AFTER_SECONDS} s.`);
      }
      throw error;
    } finally {
      this.companies.leave(companyId);
    }
  }

  /**
   * Takes one of the company's places in the pool: at once while it holds fewer than its share, else after
   * the company's earlier renders in its line. 503 when the company's line is full, or when the pool's queue
   * is full as the render would enter it (its last slot stays free for restart()).
   */
  private async admit(companyId: string): Promise<void> {
    if (!(await this.companies.enter(companyId))) throw new RendererUnavailableError();
    if (this.pool.queueSize >= this.options.queue) {
      this.companies.leave(companyId);
      throw new RendererUnavailableError();
    }
  }

  /**
   * Hands a task to the pool. A render process that ended under it (killed, out of memory, or dead while idle
   * and handed the task before its exit was seen) costs the task one more try in a new process; a second
   * end is answered with 503 by run(), so a document that ends every process it meets is tried twice at most.
   */
  private async inPoolRun(task: unknown, name?: string): Promise<unknown> {
    try {
      return await this.tracked(task, name);
    } catch (error) {
      if (processEnded(error)) return this.tracked(task, name);
      throw error;
    }
  }

  /** One pool run, kept among those close() waits for. */
  private tracked(task: unknown, name?: string): Promise<unknown> {
    const result = this.pool.run(task, name ? { name } : undefined).then((value) => {
      this.startsFailedInARow = 0;
      return value;
    });
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.inPool.add(settled);
    void settled.then(() => this.inPool.delete(settled));
    return result;
  }

  /**
   * The pool leaves the renders queued for a process that ended while starting up where they are, with no
   * process to run them and none started for them, so they would wait forever. Handing it one more task
   * (which does nothing) starts a new process, and that process then runs them in turn. When that one ends
   * before any task succeeded too, the queued renders are refused (503) rather than retried without end.
   */
  private restart(): void {
    if (this.closing || this.pool.queueSize === 0 || this.pool.threads.length > 0) return;
    this.startsFailedInARow += 1;
    if (this.startsFailedInARow >= 2) {
      this.pool.cancelPendingTasks();
      return;
    }
    this.pool.run(null, { name: 'ready' }).catch(() => undefined);
  }

  /** Renders completed by the pool (a cached PDF is not one). */
  get completed(): number {
    return this.pool.completed;
  }

  /** Waits for the renders under way, then ends the render processes. */
  async close(): Promise<void> {
    this.closing = true;
    while (this.inPool.size > 0) await Promise.all([...this.inPool]);
    await this.pool.destroy();
  }
}
