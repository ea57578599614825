import { availableParallelism } from 'node:os';
import { z } from 'zod';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value));

/** Retry delays in seconds, comma-separated (fractions allowed): the wait before the 2nd, 3rd, ... attempt. */
const retryDelays = z
  .string()
  .transform((value, context) => {
    const parts = value.split(',').map((part) => part.trim());
    const delays = parts.map(Number);
    if (parts.some((part) => !/^\d+(\.\d+)?$/.test(part)) || delays.some((delay) => !(delay <= 7 * 24 * 3600))) {
      context.addIssue({ code: 'custom', message: 'must be comma-separated numbers of seconds, each 0..604800' });
      return z.NEVER;
    }
    if (delays.length > 50) {
      context.addIssue({ code: 'custom', message: 'must list at most 50 delays' });
      return z.NEVER;
    }
    return delays;
  });

const ConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: optionalString,
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  // Off behind a transaction pooler (PgBouncer pool_mode=transaction): no named prepared statements and
  // no session parameters at connect, which such a pooler cannot keep for a client.
  DATABASE_PREPARED_STATEMENTS: booleanFlag.default(true),
  // Migrations hold a session advisory lock, so they need a direct connection, never a transaction pooler.
  DATABASE_MIGRATION_URL: optionalString,
  STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  // A transaction left open between statements (an instance frozen or cut off mid-transaction) holds its
  // row locks and the events feed of every company; PostgreSQL ends it after this long. Above the longest
  // wait the API makes inside a transaction: a send's mail server, at most 50 s.
  IDLE_IN_TRANSACTION_TIMEOUT_MS: z.coerce.number().int().min(0).default(60_000),
  DATA_DIR: z.string().min(1).default('./data'),
  MIGRATE_ON_START: booleanFlag.default(true),
  STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
  UPLOAD_DIR: optionalString,
  S3_BUCKET: optionalString,
  S3_REGION: z.string().default('us-east-1'),
  S3_ENDPOINT: optionalString,
  /** The S3 endpoint as clients reach it, when the API reaches it by another address (a container network). */
  S3_PUBLIC_ENDPOINT: optionalString.pipe(z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional()),
  S3_FORCE_PATH_STYLE: booleanFlag.default(false),
  PUBLIC_BASE_URL: optionalString.pipe(z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional()),
  PHOTO_URL_TTL_SECONDS: z.coerce.number().int().min(1).max(7 * 24 * 3600).default(3600),
  PHOTO_URL_SECRET: optionalString,
  SHARE_LINK_TTL_SECONDS: z.coerce.number().int().min(1).max(365 * 24 * 3600).default(30 * 24 * 3600),
  SMTP_URL: optionalString,
  MAIL_FROM: optionalString,
  MAX_PHOTO_BYTES: z.coerce.number().int().min(1).default(10 * 1024 * 1024),
  MAX_PHOTOS_PER_REQUEST: z.coerce.number().int().min(1).max(100).default(10),
  /**
   * Upload requests of one company read at once; the company's further uploads wait their turn unread (the
   * socket's backpressure keeps their bytes in the kernel), which bounds the memory uploads hold.
   */
  UPLOADS_PER_COMPANY: z.coerce.number().int().min(1).max(1000).default(4),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(0).default(120_000),
  // On SIGTERM, how long /readyz answers 503 (and every answer closes its connection) while requests are still
  // served, before the listener closes: a load balancer takes the instance out first, so no request is cut.
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
  // Shared rate-limit counters for several instances; unset: each instance counts on its own.
  REDIS_URL: optionalString,
  // `true` would believe any X-Forwarded-For, letting a client pick the address its key's allow-list sees.
  TRUST_PROXY: optionalString.refine((value) => value === undefined || value.trim().toLowerCase() !== 'true', {
    message:
      'true is refused: it would let any client choose its IP address for allow-lists; set the number of proxy hops (e.g. 1) or the proxies\' addresses/CIDRs (e.g. 10.0.0.0/8)',
  }),
  CORS_ORIGINS: optionalString,
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(5000).default(2000),
  USAGE_FLUSH_INTERVAL_MS: z.coerce.number().int().min(50).max(1000).default(500),
  USAGE_IDLE_EVICT_MS: z.coerce.number().int().min(1000).default(60_000),
  UPLOAD_TIMEOUT_MS: z.coerce.number().int().min(100).default(120_000),
  UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(1000),
  IDEMPOTENCY_PURGE_INTERVAL_MS: z.coerce.number().int().min(1000).default(3_600_000),
  /** Allows webhook urls on loopback, private and shared addresses (development); link-local stays refused. */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: booleanFlag.default(false),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  WEBHOOK_RETRY_DELAYS: retryDelays.default([5, 300, 1800, 7200, 18000, 36000, 36000]),
  /** Runs the delivery worker in this process. */
  WEBHOOK_WORKER_ENABLED: booleanFlag.default(true),
  /** Attempts in flight at once per process. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(64),
  /** How often the worker looks for due deliveries once a claim has found fewer than its free slots. */
  WEBHOOK_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(250),
  /** A claim's lease outlives the attempt timeout by this much; a crashed instance's claim expires after it. */
  WEBHOOK_LEASE_MARGIN_MS: z.coerce.number().int().min(500).max(600_000).default(5_000),
  /** Days events are kept in the feed (DECISIONS §9.1). */
  EVENT_RETENTION_DAYS: z.coerce.number().positive().max(3650).default(30),
  /** Render processes for PDFs, large share pages and large feeds: the cores but one (the event loop's), at most 4. */
  PDF_RENDER_THREADS: z.coerce.number().int().min(1).max(64).default(Math.max(1, Math.min(4, availableParallelism() - 1))),
  /** Renders waiting for a process at most, and a company's line beyond its quarter at most; past either a render is 503 with Retry-After. */
  PDF_RENDER_QUEUE: z.coerce.number().int().min(1).max(10_000).default(16),
  /** Bytes of rendered PDFs kept in memory, keyed by the hash of what they show; 0 keeps none. */
  PDF_CACHE_BYTES: z.coerce.number().int().min(0).default(16 * 1024 * 1024),
  /** Requests a minute per client address on the keyless routes (share pages, their PDFs and answers); 0 disables. */
  SHARE_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(60),
});

export type Config = z.infer<typeof ConfigSchema>;

/** Reads and validates the environment; the only reader of process.env. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('\n');
    throw new Error(`Invalid configuration:\n${problems}`);
  }
  const config = parsed.data;
  // The events feed tells the API's own transactions by their application_name (events.repository.ts):
  // every instance must keep the one the API sets.
  if (config.DATABASE_URL && /[?&]application_name=/i.test(config.DATABASE_URL)) {
    throw new Error('Invalid configuration:\n  DATABASE_URL: must not set application_name; the API names its own connections');
  }
  if (config.STORAGE_DRIVER === 's3' && !config.S3_BUCKET) {
    throw new Error('Invalid configuration:\n  S3_BUCKET: required when STORAGE_DRIVER is s3');
  }
  return config;
}

export function uploadDir(config: Config): string {
  return config.UPLOAD_DIR ?? `${config.DATA_DIR.replace(/\/$/, '')}/uploads`;
}
