/**
 * Interval arithmetic of availability (DECISIONS §13), without I/O or time zones: half-open intervals
 * [start, end) in epoch milliseconds. The service turns working hours into windows and reads the holds;
 * what is free is computed here only.
 */

export interface Interval {
  start: number;
  end: number;
}

/** The intervals sorted by start, overlapping or touching ones joined; empty ones dropped. */
export function mergeIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals.filter((interval) => interval.end > interval.start).sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: Interval[] = [];
  for (const interval of sorted) {
    const last = merged[merged.length - 1];
    if (last && interval.start <= last.end) {
      last.end = Math.max(last.end, interval.end);
    } else {
      merged.push({ start: interval.start, end: interval.end });
    }
  }
  return merged;
}

/** The part of each window inside `bounds`, empty parts dropped. */
export function clipIntervals(windows: readonly Interval[], bounds: Interval): Interval[] {
  return windows
    .map((window) => ({ start: Math.max(window.start, bounds.start), end: Math.min(window.end, bounds.end) }))
    .filter((window) => window.end > window.start);
}

/** What of `from` no interval of `remove` covers: `from` and `remove` merged first, the result sorted. */
export function subtractIntervals(from: readonly Interval[], remove: readonly Interval[]): Interval[] {
  const busy = mergeIntervals(remove);
  const result: Interval[] = [];
  let index = 0;
  for (const window of mergeIntervals(from)) {
    let cursor = window.start;
    // Skip the busy intervals that end before this window; busy and windows are both sorted.
    while (index < busy.length && busy[index].end <= cursor) index++;
    let probe = index;
    while (probe < busy.length && busy[probe].start < window.end) {
      if (busy[probe].start > cursor) result.push({ start: cursor, end: busy[probe].start });
      cursor = Math.max(cursor, busy[probe].end);
      if (cursor >= window.end) break;
      probe++;
    }
    if (cursor < window.end) result.push({ start: cursor, end: window.end });
  }
  return result;
}

/**
 * The free slots of one person: the maximal parts of the working windows, inside `bounds`, that no busy
 * interval covers and that last at least `minimumMs`, earliest first. Windows that touch (one working day
 * ending where the next begins) join into one slot.
 */
export function freeSlots(windows: readonly Interval[], busy: readonly Interval[], bounds: Interval, minimumMs: number): Interval[] {
  return subtractIntervals(clipIntervals(windows, bounds), busy).filter((slot) => slot.end - slot.start >= minimumMs);
}
