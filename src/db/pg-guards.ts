import pg from 'pg';

type Release = (error?: Error | boolean) => void;
/** The callback of pool.connect(callback), pg-pool's own form (pool.query uses it). */
type ConnectCallback = Parameters<pg.Pool['connect']>[0];

/** Why a client given back inside a transaction was dropped (GuardedClient); the pool's 'release' event carries it. */
export class ReleasedInTransactionError extends Error {
  constructor(status: string | null) {
    super(`a pool client was given back inside a transaction (status ${status}); it was closed, rolling that transaction back`);
  }
}

/**
 * A pool client that is safe to lose. A query that hits query_timeout leaves the connection waiting for
 * an answer that may never come, so the connection is destroyed: queued queries (the transaction's
 * rollback) fail at once and the pool drops the client instead of handing it out again.
 */
export class GuardedClient extends pg.Client {
  #release: Release | undefined;

  // pg-pool hands every checkout its own release function by setting this property.
  get release(): Release | undefined {
    return this.#release;
  }
  set release(release: Release | undefined) {
    // A client given back inside a transaction (one whose COMMIT or ROLLBACK never ran) is dropped, not
    // pooled: the next checkout's statements would run in that transaction and never commit, holding their
    // locks and the events feed's horizon until the connection closed. Dropping it rolls the transaction back.
    this.#release =
      release &&
      ((error) => {
        const status = this.getTransactionStatus();
        const inTransaction = status === 'T' || status === 'E';
        release(error || (inTransaction ? new ReleasedInTransactionError(status) : undefined));
      });
  }

  /** For this checkout: go back to the pool once, as soon as the connection breaks; release() then no-ops. */
  releaseOnBreak(): void {
    const release = this.#release;
    if (!release) throw new Error('The client is not checked out of a pool.');
    let released = false;
    const onError = (error: Error) => {
      if (released) return;
      released = true;
      release(error);
    };
    this.once('error', onError);
    this.#release = (error) => {
      this.off('error', onError);
      if (released) return;
      released = true;
      release(error);
    };
  }

  // One implementation behind all of pg.Client's query overloads.
  override query(...args: any[]): any {
    const callback: unknown = args.at(-1);
    if (typeof callback === 'function') {
      args[args.length - 1] = (error: unknown, result: unknown) => {
        if (error) this.#dropOnTimeout(error);
        callback(error, result);
      };
      return Reflect.apply(super.query, this, args);
    }
    const result: unknown = Reflect.apply(super.query, this, args);
    if (result instanceof Promise) result.catch((error: unknown) => this.#dropOnTimeout(error));
    return result;
  }

  #dropOnTimeout(error: unknown): void {
    if (error instanceof Error && error.message === 'Query read timeout') this.connection.stream.destroy();
  }
}

/**
 * A pool whose promise checkouts (`pool.connect()`) go back to the pool as soon as their connection
 * breaks; a later release() is a no-op. Drizzle's transaction() sends BEGIN before its try/finally, so a
 * BEGIN that fails on a cut connection never releases the client: without this every such failure during
 * an outage leaks a pool slot, and once `max` have leaked the service stays down after the database is back.
 */
export class SafePool extends pg.Pool {
  constructor(config: pg.PoolConfig & { Client: typeof GuardedClient }) {
    super(config);
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    // The callback form is pg-pool's own pool.query(), which always releases.
    if (callback) return super.connect(callback);
    return super.connect().then((client) => {
      (client as unknown as GuardedClient).releaseOnBreak();
      return client;
    });
  }
}
