import { describe, expect, it } from 'vitest';
import { withExactNumbers } from '../src/shared/json-numbers.js';

/** The body text a request's rules see (numeric-bounds.test.ts checks each numeric field through HTTP). */
describe('numbers no double holds exactly are replaced before parsing', () => {
  it('replaces a number whose text is not its nearest double by the next double away from zero', () => {
    expect(withExactNumbers('{"a":1.00000000000000000001}')).toBe('{"a":1.0000000000000002}');
    expect(withExactNumbers('{"a":0.99999999999999999999}')).toBe('{"a":1.0000000000000002}');
    expect(withExactNumbers('{"a":[1e-400]}')).toBe('{"a":[5e-324]}');
    expect(withExactNumbers('{"a":-1.00000000000000000001}')).toBe('{"a":-1.0000000000000002}');
    // Too large for any field: a text that reads as Infinity stays one.
    expect(withExactNumbers('{"a":1e400}')).toBe('{"a":1e400}');
    // An exponent longer than any double's is read without arithmetic on it: tiny is not zero, zero stays zero.
    const long = '9'.repeat(100_000);
    expect(withExactNumbers(`{"a":1e-${long}}`)).toBe('{"a":5e-324}');
    expect(withExactNumbers(`{"a":0e-${long},"b":1e${long}}`)).toBe(`{"a":0e-${long},"b":1e${long}}`);
    expect(withExactNumbers(`{"a":1.${'0'.repeat(100_000)}1}`)).toBe('{"a":1.0000000000000002}');
  });

  it('keeps a number its double holds, however it is written, and every string as sent', () => {
    for (const text of [
      '{"a":19.99,"b":0.1,"c":0.30000000000000004}',
      '{"a":1.50000000000000000000,"b":1e2,"c":1.5E-3,"d":100000000000000000000000}',
      '{"a":"1.00000000000000000001","b":"x\\"1.00000000000000000001"}',
      '{"1.00000000000000000001":1}',
    ]) {
      expect(withExactNumbers(text)).toBe(text);
      expect(() => JSON.parse(withExactNumbers(text))).not.toThrow();
    }
  });
});
