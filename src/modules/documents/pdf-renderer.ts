import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { AppError } from '../../errors.js';
import { etagOf } from '../../shared/etag.js';
import type { CustomerDocument } from './document-view.js';

export interface PdfRendererOptions {
  /** Worker threads (PDF_RENDER_THREADS). */
  threads: number;
  /** Documents waiting for a thread at most (PDF_RENDER_QUEUE); past it a render is refused with 503. */
  queue: number;
  /** Bytes of rendered PDFs kept (PDF_CACHE_BYTES); 0 keeps none. */
  cacheBytes: number;
  /** How long an idle thread lives before it exits and frees its memory. */
  idleTimeoutMs?: number;
}

/** Seconds a client refused by a full queue is asked to wait (Retry-After). */
const BUSY_RETRY_AFTER_SECONDS = 2;

/** 503 with Retry-After: every thread is busy and the queue is full. */
export class RendererBusyError extends AppError {
  readonly retryAfterSeconds = BUSY_RETRY_AFTER_SECONDS;

  constructor() {
    super('service_unavailable', `Too many documents are being rendered; retry in ${BUSY_RETRY_AFTER_SECONDS} s.`);
  }
}

/** What piscina rejects a task with when its queue is full. */
const QUEUE_FULL = /^(Task queue is at limit|No task queue available)$/;

/**
 * The worker module beside this one: pdf-worker.ts under tsx (tests, development), which the thread loads
 * through tsx as well, or the compiled pdf-worker.js of dist/ (the image).
 */
function workerModule(): { filename: string; execArgv: string[] } {
  const extension = extname(fileURLToPath(import.meta.url));
  const filename = new URL(`./pdf-worker${extension}`, import.meta.url).href;
  return { filename, execArgv: extension === '.ts' ? ['--import', 'tsx'] : [] };
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

/**
 * Renders PDFs in a small pool of worker threads, so a large document never stalls the event loop that
 * serves every other request (DECISIONS §11). The queue is bounded: when it is full, a render is refused
 * at once (503 with Retry-After) instead of waiting without end. A PDF is cached under the hash of its
 * whole view model (the record and everything else the PDF shows), so a cached copy is never stale, and
 * concurrent requests for the same content share one render.
 */
export class PdfRenderer {
  private readonly pool: Piscina<CustomerDocument, Uint8Array>;
  private readonly cache: PdfCache;
  private readonly rendering = new Map<string, Promise<Buffer>>();

  constructor(private readonly options: PdfRendererOptions) {
    this.pool = new Piscina({
      ...workerModule(),
      // No thread until the first PDF: the layout engine and its fonts stay out of instances that make none.
      minThreads: 0,
      maxThreads: options.threads,
      maxQueue: options.queue,
      idleTimeout: options.idleTimeoutMs ?? 30_000,
      // Rendering yields the CPU to the event loop's thread when both want it (Linux, where supported).
      niceIncrement: 10,
    });
    this.cache = new PdfCache(options.cacheBytes);
  }

  async render(document: CustomerDocument): Promise<Buffer> {
    const key = etagOf(document);
    const cached = this.cache.get(key);
    if (cached) return cached;
    let pending = this.rendering.get(key);
    if (!pending) {
      pending = this.renderNow(document).finally(() => this.rendering.delete(key));
      this.rendering.set(key, pending);
    }
    const pdf = await pending;
    this.cache.set(key, pdf);
    return pdf;
  }

  private async renderNow(document: CustomerDocument): Promise<Buffer> {
    if (this.pool.queueSize >= this.options.queue) throw new RendererBusyError();
    try {
      const bytes = await this.pool.run(document);
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (error) {
      if (error instanceof Error && QUEUE_FULL.test(error.message)) throw new RendererBusyError();
      throw error;
    }
  }

  /** Waits for the renders under way, then ends the threads. */
  async close(): Promise<void> {
    await this.pool.close();
  }
}
