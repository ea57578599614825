import { v7 as uuidv7 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { uuidRun } from '../src/shared/ids.js';

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
