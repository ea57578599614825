import { describe, expect, it } from 'vitest';
import { SharedFlush } from '../src/db/perf/shared-flush.js';

/** A flush whose completion the test controls: each call is recorded with its resolve and reject. */
function controlledFlush() {
  const calls: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  const flush = () =>
    new Promise<void>((resolve, reject) => {
      calls.push({ resolve, reject });
    });
  return { calls, flush };
}

const settled = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

function tracked(promise: Promise<void>) {
  const state = { done: false, error: null as Error | null };
  promise.then(
    () => (state.done = true),
    (error: Error) => (state.error = error),
  );
  return state;
}

describe('SharedFlush', () => {
  it('sends a flush for the first waiter, and one more for everyone who came while it ran', async () => {
    const { calls, flush } = controlledFlush();
    const shared = new SharedFlush(flush);
    const first = tracked(shared.wait());
    await settled();
    expect(calls).toHaveLength(1);

    // Came while the first flush ran: its commit may be after that flush's, so it waits for the next one.
    const second = tracked(shared.wait());
    const third = tracked(shared.wait());
    await settled();
    expect(calls).toHaveLength(1);

    calls[0].resolve();
    await settled();
    expect(first.done).toBe(true);
    expect(second.done).toBe(false);
    expect(third.done).toBe(false);
    expect(calls).toHaveLength(2);

    calls[1].resolve();
    await settled();
    expect(second.done).toBe(true);
    expect(third.done).toBe(true);
    expect(calls).toHaveLength(2);

    // Idle again: the next waiter starts its own flush at once.
    const fourth = tracked(shared.wait());
    await settled();
    expect(calls).toHaveLength(3);
    calls[2].resolve();
    await settled();
    expect(fourth.done).toBe(true);
  });

  it('rejects the waiters of a failed flush; a queued flush still runs after it, and a new wait sends another', async () => {
    const { calls, flush } = controlledFlush();
    const shared = new SharedFlush(flush);
    const first = tracked(shared.wait());
    await settled();
    const second = tracked(shared.wait());
    calls[0].reject(new Error('connection cut'));
    await settled();
    expect(first.error?.message).toBe('connection cut');
    expect(calls).toHaveLength(2);
    calls[1].resolve();
    await settled();
    expect(second.done).toBe(true);

    const retry = tracked(shared.wait());
    await settled();
    expect(calls).toHaveLength(3);
    calls[2].resolve();
    await settled();
    expect(retry.done).toBe(true);
  });

  it('turns a flush that throws synchronously into a rejection', async () => {
    const shared = new SharedFlush(() => {
      throw new Error('no pool');
    });
    await expect(shared.wait()).rejects.toThrow('no pool');
    await expect(shared.wait()).rejects.toThrow('no pool');
  });
});
