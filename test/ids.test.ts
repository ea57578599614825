import { v7 as uuidv7 } from 'uuid';
import { describe, expect, it, vi } from 'vitest';
import { newRecordId, uuidRun } from '../src/shared/ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidRun', () => {
  it('answers the first id and its successors: distinct UUIDv7s of its moment', () => {
    const first = uuidv7();
    const ids = uuidRun(first, 20);
    expect(ids).toHaveLength(20);
    expect(ids[0]).toBe(first);
    expect(new Set(ids).size).toBe(20);
    for (const id of ids) {
      expect(id).toMatch(UUID_V7);
      expect(id.slice(0, 24)).toBe(first.slice(0, 24));
    }
  });

  it('wraps within the last 48 bits, keeping the version and variant', () => {
    const ids = uuidRun('01a213d4-8bd3-7141-9caa-fffffffffffe', 3);
    expect(ids).toEqual(['01a213d4-8bd3-7141-9caa-fffffffffffe', '01a213d4-8bd3-7141-9caa-ffffffffffff', '01a213d4-8bd3-7141-9caa-000000000000']);
  });
});

describe('newRecordId', () => {
  it('answers UUIDv7s of this moment that sort in the order they were made, 10,000 in a row', () => {
    const before = Date.now();
    const ids = Array.from({ length: 10_000 }, () => newRecordId());
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect([...ids].sort()).toEqual(ids);
    const millisecond = (id: string) => Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(millisecond(ids[0])).toBeGreaterThanOrEqual(before);
    expect(millisecond(ids.at(-1)!)).toBeLessThanOrEqual(after + 1);
  });

  it('keeps counting within a millisecond and starts at a random value in the next', () => {
    const clock = vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 10, 27));
    try {
      const sameMillisecond = Array.from({ length: 50 }, () => newRecordId());
      expect([...sameMillisecond].sort()).toEqual(sameMillisecond);
      expect(new Set(sameMillisecond.map((id) => id.slice(0, 13))).size).toBe(1);
      clock.mockReturnValue(Date.UTC(2026, 10, 27) + 1);
      const next = [newRecordId(), newRecordId()];
      expect(next[0] > sameMillisecond.at(-1)!).toBe(true);
      expect(next[1] > next[0]).toBe(true);
      // Random parts differ between ids, not only the counter.
      expect(new Set(sameMillisecond.map((id) => id.slice(-8))).size).toBeGreaterThan(40);
    } finally {
      clock.mockRestore();
    }
  });
});
