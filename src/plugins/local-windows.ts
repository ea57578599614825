/** A fixed window's count and the ms left in it. */
export type WindowCount = { current: number; ttl: number };

/** The same fixed window in this process only: what an instance counts while Redis cannot be reached. */
export class LocalWindows {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  private sweptAt = Date.now();

  incr(key: string, windowMs: number): WindowCount {
    const now = Date.now();
    if (now - this.sweptAt > windowMs) {
      for (const [name, window] of this.windows) if (window.endsAt <= now) this.windows.delete(name);
      this.sweptAt = now;
    }
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { count: 0, endsAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { current: window.count, ttl: window.endsAt - now };
  }
}
