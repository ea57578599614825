import type { Db } from '../../db/client.js';
import { recordKeysLastUsed } from './auth.repository.js';

/** How often an instance writes when its keys were last used: last_used_at is at most this far behind. */
export const LAST_USED_FLUSH_INTERVAL_MS = 30_000;

/**
 * When each API key was last used, kept without a write per request: a request notes the time in memory,
 * and the instance writes the noted times of all its keys in one statement every flush interval (and a last
 * time on close), like the usage meter. A key's first use in an interval is written at once, so last_used_at
 * shows a key's use within moments, and an instance that dies without closing (kill -9) loses at most an
 * interval of it: the stored time stays within an interval of the key's last use.
 */
export class LastUsedRecorder {
  /** Key id -> when this instance last saw it (ms since the epoch). */
  private pending = new Map<string, number>();
  /** Key id -> when this instance last wrote a use of it at once. */
  private writtenAt = new Map<string, number>();
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
    const written = this.writtenAt.get(apiKeyId);
    if (written === undefined || now - written >= this.flushIntervalMs) {
      this.writtenAt.set(apiKeyId, now);
      void this.flush();
    }
  }

  start(): void {
    this.timer ??= setInterval(() => {
      // Keys not used for an interval are forgotten: their next use is written at once again.
      const stale = Date.now() - this.flushIntervalMs;
      for (const [id, at] of this.writtenAt) if (at < stale) this.writtenAt.delete(id);
      void this.flush();
    }, this.flushIntervalMs);
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
