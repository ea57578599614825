import type { Db } from '../../db/client.js';
import { recordKeysLastUsed } from './auth.repository.js';

/** How often an instance writes when its keys were last used: last_used_at is at most this far behind. */
export const LAST_USED_FLUSH_INTERVAL_MS = 30_000;

/**
 * When each API key was last used, kept without a write per request: a request only notes the time in
 * memory, and the instance writes the noted times of all its keys in one statement every flush interval
 * (and a last time on close), like the usage meter.
 */
export class LastUsedRecorder {
  /** Key id -> when this instance last saw it (ms since the epoch). */
  private pending = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly flushIntervalMs = LAST_USED_FLUSH_INTERVAL_MS,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Notes that the key was used now. */
  used(apiKeyId: string, now = Date.now()): void {
    this.pending.set(apiKeyId, now);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.flushIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Writes the noted times; on failure they are kept for the next flush (a later time wins). */
  async flush(): Promise<void> {
    // After a flush in progress, so what was noted meanwhile is written too.
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = recordKeysLastUsed(this.db, batch)
      .catch((error: unknown) => {
        for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
        this.onError(error);
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }
}
