import { z } from 'zod';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value));

const ConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: optionalString,
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  DATA_DIR: z.string().min(1).default('./data'),
  MIGRATE_ON_START: booleanFlag.default(true),
  STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
  UPLOAD_DIR: optionalString,
  S3_BUCKET: optionalString,
  S3_REGION: z.string().default('us-east-1'),
  S3_ENDPOINT: optionalString,
  S3_FORCE_PATH_STYLE: booleanFlag.default(false),
  PUBLIC_BASE_URL: optionalString.pipe(z.url().optional()),
  PHOTO_URL_TTL_SECONDS: z.coerce.number().int().min(1).max(7 * 24 * 3600).default(3600),
  PHOTO_URL_SECRET: optionalString,
  MAX_PHOTO_BYTES: z.coerce.number().int().min(1).default(10 * 1024 * 1024),
  MAX_PHOTOS_PER_REQUEST: z.coerce.number().int().min(1).max(100).default(10),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(0).default(120_000),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
  TRUST_PROXY: optionalString,
  CORS_ORIGINS: optionalString,
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).max(5000).default(2000),
  USAGE_FLUSH_INTERVAL_MS: z.coerce.number().int().min(50).max(1000).default(500),
  /** Days events are kept in the feed (DECISIONS §9.1). */
  EVENT_RETENTION_DAYS: z.coerce.number().positive().max(3650).default(30),
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
  if (config.STORAGE_DRIVER === 's3' && !config.S3_BUCKET) {
    throw new Error('Invalid configuration:\n  S3_BUCKET: required when STORAGE_DRIVER is s3');
  }
  return config;
}

export function uploadDir(config: Config): string {
  return config.UPLOAD_DIR ?? `${config.DATA_DIR.replace(/\/$/, '')}/uploads`;
}
