import { describe, expect, it } from 'vitest';
import { CompanyLines } from '../src/shared/company-lines.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CompanyLines', () => {
  it("runs a company's tasks up to its share, lines up the rest in arrival order, and never holds another company", async () => {
    const lines = new CompanyLines(2, 2);
    const entered: string[] = [];
    const enter = (company: string, name: string) => lines.enter(company).then((ok) => ok && entered.push(name));
    await Promise.all([enter('a', 'a1'), enter('a', 'a2')]);
    void enter('a', 'a3');
    void enter('a', 'a4');
    expect(await lines.enter('a')).toBe(false); // a's line holds 2 at most
    await enter('b', 'b1');
    await tick();
    expect(entered).toEqual(['a1', 'a2', 'b1']);
    expect(lines.hasRoom('a')).toBe(false);
    expect(lines.waiting('a')).toBe(2);

    lines.leave('a'); // a1's place goes to a3
    await tick();
    expect(entered).toEqual(['a1', 'a2', 'b1', 'a3']);
    lines.leave('a');
    lines.leave('a');
    lines.leave('a');
    await tick();
    expect(entered.at(-1)).toBe('a4');
    expect(lines.hasRoom('a')).toBe(true);
    lines.leave('a');
    expect(lines.waiting('a')).toBe(0);
    expect(lines.hasRoom('b')).toBe(true);
  });
});
