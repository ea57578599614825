import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** What a pino logger offers beyond FastifyBaseLogger, when it is one (the no-op logger of `logger: false` is not). */
interface LevelAware {
  isLevelEnabled?(level: string): boolean;
}

/**
 * A request's child logger that costs nothing until a line is written at an enabled level: its bindings
 * (the request id, then the company and the key prefix) are kept, and the pino child is made from them on
 * the first line that is actually written. Under the usual levels (info or warn) a request that logs
 * nothing but its completion line makes one child instead of two, and a request whose completion line is
 * below the level makes none. Every line written carries the same bindings as with pino's own children.
 */
export class LazyChildLogger implements FastifyBaseLogger {
  #logger: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly childBindings: Bindings,
    private readonly options: ChildLoggerOptions | undefined,
  ) {}

  /** The pino child, made once. */
  #real(): FastifyBaseLogger {
    if (!this.#logger) {
      const parent = this.parent instanceof LazyChildLogger ? this.parent.#real() : this.parent;
      this.#logger = parent.child(this.childBindings, this.options);
    }
    return this.#logger;
  }

  #enabled(level: Level): boolean {
    if (this.#logger) return true;
    return isLevelEnabled(this.parent, level);
  }

  isLevelEnabled(level: string): boolean {
    return this.#logger ? isLevelEnabled(this.#logger, level) : isLevelEnabled(this.parent, level);
  }

  get level(): string {
    return this.#logger?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    // A child of an unmade child stays unmade too: it makes this one first when it writes a line.
    if (options?.level) return this.#real().child(bindings, options);
    return new LazyChildLogger(this.#logger ?? this, bindings, options);
  }

  bindings(): Bindings {
    return (this.#real() as unknown as { bindings(): Bindings }).bindings();
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}

  #write(level: Level, args: unknown[]): void {
    if (!this.#enabled(level)) return;
    const logger = this.#real();
    (logger[level] as (...values: unknown[]) => void).apply(logger, args);
  }
}

function isLevelEnabled(logger: FastifyBaseLogger, level: string): boolean {
  const check = (logger as LevelAware).isLevelEnabled;
  return typeof check === 'function' ? check.call(logger, level) : true;
}

/**
 * Fastify's child logger factory (setChildLoggerFactory): each request's logger is a LazyChildLogger of
 * the server's, with the request id as its binding. A route with its own log level gets pino's child at once.
 */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  if (options?.level || typeof (logger as LevelAware).isLevelEnabled !== 'function') return logger.child(bindings, options);
  return new LazyChildLogger(logger, bindings, Object.keys(options ?? {}).length > 0 ? options : undefined);
}
