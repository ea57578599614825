import { setMaxListeners } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { resolveSafeAddress, UnsafeAddressError, type AddressPolicy } from './address-safety.js';
import { postWebhook } from './sender.js';
import { signWebhook } from './signature.js';
import { claimDueDeliveries, recordAttempts, type AttemptResult, type ClaimedDelivery, type RecordedAttempt } from './webhooks.repository.js';

type WorkerConfig = Pick<
  Config,
  'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_RETRY_DELAYS' | 'WEBHOOK_CONCURRENCY' | 'WEBHOOK_POLL_INTERVAL_MS' | 'WEBHOOK_LEASE_MARGIN_MS'
>;

/** The longest a stopping worker waits for attempts in flight before it interrupts them. */
const STOP_WAIT_MS = 5_000;

/** Workers of this process, woken when a delivery becomes due here (a retry asked for). */
const workers = new Set<DeliveryWorker>();

export function wakeDeliveryWorkers(): void {
  for (const worker of workers) worker.wake();
}

/**
 * Delivers due webhook deliveries: claims them from PostgreSQL with a lease, POSTs each outside any
 * transaction, at most WEBHOOK_CONCURRENCY at once, and records each outcome. State lives in the
 * database only, so any number of instances can run this side by side and a crashed one loses nothing.
 */
export class DeliveryWorker {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly interrupt = new AbortController();
  private stopping = false;
  private loop: Promise<void> | undefined;
  private wakeRequested = false;
  /** The last claim filled every free slot: more deliveries may be due than were claimed. */
  private backlog = false;
  private wakeSleeper: (() => void) | undefined;
  /** Outcomes waiting to be written, and the write in progress: outcomes are recorded in batches. */
  private pendingRecords: Array<RecordedAttempt & { done: () => void }> = [];
  private recording: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly config: WorkerConfig,
    private readonly policy: AddressPolicy,
    private readonly log: FastifyBaseLogger,
  ) {
    // Every attempt in flight listens for the shutdown on this one signal (and removes its listener when it
    // ends): up to WEBHOOK_CONCURRENCY listeners are expected, not a leak, so Node's warning past 10 is off.
    setMaxListeners(0, this.interrupt.signal);
  }

  start(): void {
    if (this.loop) return;
    workers.add(this);
    this.loop = this.run();
  }

  wake(): void {
    this.wakeRequested = true;
    this.wakeSleeper?.();
  }

  /** Stops claiming, waits a bounded time for attempts in flight, interrupts the rest and records them. */
  async stop(): Promise<void> {
    this.stopping = true;
    workers.delete(this);
    this.wake();
    await this.loop;
    if (this.inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.min(STOP_WAIT_MS, this.config.WEBHOOK_TIMEOUT_MS));
      });
      await Promise.race([Promise.all(this.inFlight), bound]);
      clearTimeout(timer);
      this.interrupt.abort();
      await Promise.all(this.inFlight);
    }
  }

  private async run(): Promise<void> {
    const leaseMs = this.config.WEBHOOK_TIMEOUT_MS + this.config.WEBHOOK_LEASE_MARGIN_MS;
    while (!this.stopping) {
      const capacity = this.config.WEBHOOK_CONCURRENCY - this.inFlight.size;
      // Claims wait for a few free slots (or an idle worker), so a busy worker claims in batches.
      const worthClaiming = capacity > 0 && (this.inFlight.size === 0 || capacity >= Math.ceil(this.config.WEBHOOK_CONCURRENCY / 4));
      let claimed: ClaimedDelivery[] = [];
      if (worthClaiming) {
        try {
          claimed = await claimDueDeliveries(this.db, capacity, leaseMs);
        } catch (error) {
          this.log.warn({ err: error }, 'webhook delivery claim failed');
        }
        // A full batch means more may be due; a short one drained what was due.
        this.backlog = claimed.length === capacity;
        for (const delivery of claimed) {
          const attempt = this.attempt(delivery).finally(() => {
            this.inFlight.delete(attempt);
            // A freed slot is worth a claim only while a backlog waits for slots. Otherwise the next poll
            // claims what became due meanwhile in one batch, instead of a claim per finished attempt.
            if (this.backlog) this.wake();
          });
          this.inFlight.add(attempt);
        }
      }
      if (worthClaiming && this.backlog) continue;
      await this.sleep(this.config.WEBHOOK_POLL_INTERVAL_MS);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.wakeRequested) {
      this.wakeRequested = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      this.wakeSleeper = () => {
        this.wakeRequested = false;
        finish();
      };
    });
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    let result: AttemptResult;
    if (!delivery.endpointLive || !delivery.endpointEnabled) {
      const why = delivery.endpointLive ? 'The endpoint was disabled.' : 'The endpoint was deleted.';
      result = { status: 'failed', responseStatus: null, responseBody: null, error: why, sent: false };
    } else {
      result = await this.send(delivery);
    }
    await new Promise<void>((done) => {
      this.pendingRecords.push({ claimed: delivery, result, done });
      this.recording ??= this.flushRecords();
    });
  }

  /** Writes the queued outcomes, one statement per batch, until none is left. */
  private async flushRecords(): Promise<void> {
    while (this.pendingRecords.length > 0) {
      const batch = this.pendingRecords.splice(0, 500);
      try {
        await recordAttempts(this.db, batch);
      } catch (error) {
        // The leases expire and the deliveries are attempted again: at least once.
        this.log.warn({ err: error, deliveries: batch.length }, 'recording webhook attempts failed');
      }
      for (const entry of batch) entry.done();
    }
    this.recording = undefined;
  }

  /**
   * One attempt: check the address again, POST to it and read the answer within the timeout (at most
   * 64 KiB of it, sender.ts), and classify the outcome by the status alone.
   */
  private async send(delivery: ClaimedDelivery): Promise<AttemptResult> {
    const timeoutMs = this.config.WEBHOOK_TIMEOUT_MS;
    // One controller per attempt, its timer and shutdown listener removed as soon as the attempt ends: at
    // thousands of attempts a second, AbortSignal.timeout and AbortSignal.any keep each attempt's signals
    // alive for the whole timeout and grow the heap by tens of MiB.
    const controller = new AbortController();
    const signal = controller.signal;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException(`No answer within ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
    const onInterrupt = () => controller.abort(this.interrupt.signal.reason);
    if (this.interrupt.signal.aborted) onInterrupt();
    else this.interrupt.signal.addEventListener('abort', onInterrupt, { once: true });
    let outcome: { responseStatus: number | null; responseBody: string | null; error: string | null };
    try {
      const url = new URL(delivery.url);
      const target = await abortable(resolveSafeAddress(url, this.policy), signal);
      const body = delivery.eventJson;
      const timestamp = Math.floor(Date.now() / 1000);
      const { status, body: responseBody } = await postWebhook({
        url,
        ...target,
        body,
        signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'field-service-crm-webhooks/1',
          'webhook-id': delivery.eventUuid,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(delivery.secret, delivery.eventUuid, timestamp, body),
        },
      });
      if (status >= 200 && status < 300) return { status: 'succeeded', responseStatus: status, responseBody, error: null };
      const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
      outcome = { responseStatus: status, responseBody, error: `The receiver answered HTTP ${status}${redirect}.` };
    } catch (error) {
      let message: string;
      if (error instanceof UnsafeAddressError) message = `Address refused: ${error.message}.`;
      else if (this.interrupt.signal.aborted) message = 'The attempt was interrupted by a shutdown.';
      else if (timedOut) message = `No answer within ${timeoutMs} ms.`;
      else message = `The request failed: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`;
      outcome = { responseStatus: null, responseBody: null, error: message };
    } finally {
      clearTimeout(timer);
      this.interrupt.signal.removeEventListener('abort', onInterrupt);
    }
    const delays = this.config.WEBHOOK_RETRY_DELAYS;
    if (delivery.attempts <= delays.length) {
      return { status: 'pending', retryInSeconds: delays[delivery.attempts - 1], ...outcome };
    }
    return { status: 'failed', ...outcome };
  }
}

/** The promise, or a rejection as soon as the signal aborts (a DNS lookup cannot be cancelled). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
