import { describe, expect, it } from 'vitest';
import { CompanyLines } from '../src/shared/company-lines.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CompanyLines', () => {
  it("runs a company's tasks up to its share, lines up the rest in arrival order, and never holds another company", async () => {
    const lines = new CompanyLines(2, 2);
    const entered: string[] = [];
    const enter = (company: string, name: string, cancel?: AbortSignal) => lines.enter(company, cancel).then((ok) => (ok ? entered.push(name) : entered.push(`${name} refused`)));
    await Promise.all([enter('a', 'a1'), enter('a', 'a2')]);
    void enter('a', 'a3');
    void enter('a', 'a4');
    await enter('a', 'a5'); // a's line holds 2 at most
    await enter('b', 'b1');
    await tick();
    expect(entered).toEqual(['a1', 'a2', 'a5 refused', 'b1']);

    lines.leave('a'); // a1's place goes to a3, then a2's to a4
    await tick();
    lines.leave('a');
    await tick();
    expect(entered.slice(-2)).toEqual(['a3', 'a4']);
    lines.leave('a');
    lines.leave('a');
    await enter('a', 'a6'); // every place free again: at once
    expect(entered.at(-1)).toBe('a6');
  });

  it('drops a task from its line when its signal aborts, and hands the place to the one after it', async () => {
    const lines = new CompanyLines(1);
    const entered: string[] = [];
    await lines.enter('a');
    const gone = new AbortController();
    const cancelled = lines.enter('a', gone.signal);
    const next = lines.enter('a').then(() => entered.push('next'));
    gone.abort();
    expect(await cancelled).toBe(false);
    lines.leave('a');
    await next;
    expect(entered).toEqual(['next']);
    // An aborted signal is refused at once when the task would wait.
    expect(await lines.enter('a', gone.signal)).toBe(false);
  });
});
