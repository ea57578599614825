import type { Db } from '../../db/client.js';
import { deleteEventsBefore } from './events.repository.js';
import { retentionCutoff } from './events.service.js';

const BATCH_SIZE = 1000;

/** Deletes every event older than the retention period, batch by batch; returns how many. */
export async function deleteExpiredEvents(db: Db, retentionDays: number, batchSize = BATCH_SIZE): Promise<number> {
  const cutoff = retentionCutoff(retentionDays);
  let total = 0;
  for (;;) {
    const deleted = await deleteEventsBefore(db, cutoff, batchSize);
    total += deleted;
    if (deleted < batchSize) return total;
  }
}

/**
 * The periodic event cleanup of one process. stop() waits for a running pass, so the database it
 * uses must stay open until stop() resolves.
 */
export class EventRetention {
  private timer: NodeJS.Timeout | null = null;
  private first: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly retentionDays: number,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** A first pass a minute after start (so frequent restarts still clean up), then one every interval. */
  start(): void {
    if (this.timer) return;
    this.first = setTimeout(() => void this.runOnce(), Math.min(this.intervalMs, 60_000));
    this.first.unref();
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
  }

  /** One cleanup pass; a pass already running is joined instead of starting another. */
  runOnce(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= deleteExpiredEvents(this.db, this.retentionDays)
      .then(() => undefined)
      .catch(this.onError)
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.first) clearTimeout(this.first);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
