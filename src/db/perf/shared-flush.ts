/**
 * Waits for the write-ahead log to reach the disk, one flush shared by every waiter that can share it.
 *
 * A flush is a tiny transaction that commits synchronously: the log is written and flushed in order, so it
 * also puts on disk every commit recorded before its own commit record. A waiter whose commit has returned is
 * therefore covered by any flush sent after that moment, not by one already under way (its commit record may
 * precede the waiter's). So while a flush runs, new waiters queue for the next one, which starts when it ends
 * and serves them all: under load, many commits share one flush statement instead of each sending its own.
 */
export class SharedFlush {
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;

  constructor(private readonly flush: () => Promise<unknown>) {}

  /** Resolves once a flush sent after this call has committed; rejects when that flush fails. */
  wait(): Promise<void> {
    if (!this.#running) return this.#start();
    this.#next ??= this.#running.then(
      () => this.#startNext(),
      () => this.#startNext(),
    );
    return this.#next;
  }

  #startNext(): Promise<void> {
    this.#next = null;
    return this.#start();
  }

  #start(): Promise<void> {
    const running = Promise.resolve()
      .then(() => this.flush())
      .then(() => undefined)
      .finally(() => {
        if (this.#running === running) this.#running = null;
      });
    this.#running = running;
    return running;
  }
}
