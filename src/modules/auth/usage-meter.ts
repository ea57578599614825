import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { addUsage, usageOfOtherInstances, usageSplit } from './usage.repository.js';

interface CompanyUsage {
  period: string;
  /** Requests counted by other instances, as of the last refresh. */
  others: number;
  /** Requests counted by this instance this period. */
  mine: number;
  /** Part of `mine` not yet written to the database. */
  unflushed: number;
  lastSeen: number;
}

export interface UsageDecision {
  allowed: boolean;
  count: number;
  resetsAt: string;
}

export function usagePeriod(now: Date): string {
  return now.toISOString().slice(0, 7);
}

export function nextPeriodStart(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
}

/** How long a company stays in memory without requests before it is dropped (USAGE_IDLE_EVICT_MS). */
export const DEFAULT_IDLE_EVICT_MS = 60_000;

/**
 * Monthly request counting shared by all instances through the database. Each instance counts in
 * memory (exact within the instance) and adds its buffered counts to its own row every flush
 * interval, so no request writes to a shared hot row; across instances the count can lag by at most
 * one flush interval of traffic.
 *
 * A company idle for idleEvictMs is dropped from memory once everything it counted is written; when it
 * comes back both parts are read from the database, this instance's own row included, so the database
 * (which holds every flushed count) is the one source a dropped entry is rebuilt from.
 */
export class UsageMeter {
  readonly instanceId = newRecordId();
  private readonly usage = new Map<string, CompanyUsage>();
  private readonly loading = new Map<string, Promise<CompanyUsage>>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private stopping = false;

  constructor(
    private readonly db: Db,
    private readonly flushIntervalMs: number,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly idleEvictMs: number = DEFAULT_IDLE_EVICT_MS,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.flushIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.stopping = true;
    await this.flushing;
    await this.flush();
  }

  /** The period of a moment and when the next one starts, kept until the month turns. */
  private current: { from: number; until: number; period: string; resetsAt: string } | undefined;

  private periodOf(nowMs: number): { period: string; resetsAt: string } {
    const current = this.current;
    if (current && nowMs >= current.from && nowMs < current.until) return current;
    const now = new Date(nowMs);
    const from = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const until = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    this.current = { from, until, period: usagePeriod(now), resetsAt: nextPeriodStart(now) };
    return this.current;
  }

  /** Counts one request unless it would pass the limit. */
  async count(companyId: string, limit: number | null, now?: Date): Promise<UsageDecision> {
    const nowMs = now?.getTime() ?? Date.now();
    const { period, resetsAt } = this.periodOf(nowMs);
    const known = this.usage.get(companyId);
    let entry = known && known.period === period ? known : await this.entry(companyId, period, nowMs);
    // A flush may have dropped the entry while this request waited for it: count on the live one.
    while (this.usage.get(companyId) !== entry) entry = await this.entry(companyId, period, nowMs);
    entry.lastSeen = nowMs;
    const current = entry.others + entry.mine;
    if (limit !== null && current + 1 > limit) return { allowed: false, count: current, resetsAt };
    entry.mine += 1;
    entry.unflushed += 1;
    return { allowed: true, count: current + 1, resetsAt };
  }

  /** The current count without counting: what a refused (403 ip_restricted) request reports. */
  async peek(companyId: string, now?: Date): Promise<Omit<UsageDecision, 'allowed'>> {
    const nowMs = now?.getTime() ?? Date.now();
    const { period, resetsAt } = this.periodOf(nowMs);
    const entry = await this.entry(companyId, period, nowMs);
    entry.lastSeen = nowMs;
    return { count: entry.others + entry.mine, resetsAt };
  }

  private async entry(companyId: string, period: string, nowMs: number): Promise<CompanyUsage> {
    const existing = this.usage.get(companyId);
    if (existing && existing.period === period) return existing;
    const key = `${companyId}:${period}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = (async () => {
        if (existing && existing.unflushed > 0) await this.flushCompany(companyId, existing);
        const { mine, others } = await usageSplit(this.db, companyId, period, this.instanceId);
        const fresh: CompanyUsage = { period, others, mine, unflushed: 0, lastSeen: nowMs };
        this.usage.set(companyId, fresh);
        return fresh;
      })().finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  private async flushCompany(companyId: string, entry: CompanyUsage): Promise<void> {
    const delta = entry.unflushed;
    if (delta > 0) {
      entry.unflushed -= delta;
      try {
        await addUsage(this.db, companyId, entry.period, this.instanceId, delta);
      } catch (error) {
        entry.unflushed += delta;
        throw error;
      }
    }
    if (!this.stopping) entry.others = await usageOfOtherInstances(this.db, companyId, entry.period, this.instanceId);
  }

  /** Writes buffered counts and refreshes the other instances' counts of recently active companies. */
  async flush(): Promise<void> {
    // A flush asked for while another runs may need what that one read too early (another instance's counts
    // written meanwhile): it runs afresh once that one ends, one queued for all who ask meanwhile.
    if (this.flushing) {
      this.queued ??= this.flushing.then(() => {
        this.queued = undefined;
        return this.flush();
      });
      return this.queued;
    }
    this.flushing = (async () => {
      const cutoff = Date.now() - this.idleEvictMs;
      for (const [companyId, entry] of this.usage) {
        if (entry.unflushed === 0 && entry.lastSeen < cutoff) {
          this.usage.delete(companyId);
          continue;
        }
        try {
          await this.flushCompany(companyId, entry);
        } catch (error) {
          this.onError(error);
        }
      }
    })().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }
}
