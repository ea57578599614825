import fp from 'fastify-plugin';
import ipaddr from 'ipaddr.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/client.js';
import { AppError } from '../errors.js';
import { API_KEY_PATTERN, hashApiKey } from '../modules/auth/api-keys.js';
import { findActiveKey, type KeyRecord } from '../modules/auth/auth.repository.js';
import type { LastUsedRecorder } from '../modules/auth/last-used.js';
import type { UsageMeter } from '../modules/auth/usage-meter.js';
import { ensureSandbox } from '../modules/companies/sandbox.service.js';
import type { Addon, Principal } from '../auth/principal.js';
import { scopeAllows } from '../auth/scopes.js';
import { SCOPE_OPERATION_MARK } from '../shared/openapi.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** The company add-on a route needs (403 addon_required without it). */
    addon?: Addon;
  }
  interface FastifyInstance {
    /** Drops a key from this instance's cache after a change to it (other instances reload it within the TTL). */
    forgetApiKey(apiKeyId: string): void;
  }
}

type IpRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

interface CachedKey {
  record: KeyRecord | null;
  principal: Principal | null;
  allowedRanges: IpRange[];
  /** The monthly limit the request counts against: none in the sandbox. */
  monthlyRequestLimit: number | null;
  loadedAt: number;
}

export interface AuthOptions {
  db: Db;
  usage: UsageMeter;
  lastUsed: LastUsedRecorder;
  /** How long a key's row and its company's settings are trusted before they are read again. */
  cacheTtlMs: number;
  /** Failed authentications per client IP and minute before that IP's unknown keys are refused unread (0: off). */
  unauthenticatedPerMinute?: number;
}

const MAX_CACHED_KEYS = 50_000;
/** Unknown or revoked key hashes remembered apart, so random keys never push real ones out of the cache. */
const MAX_NEGATIVE_KEYS = 10_000;
const MAX_TRACKED_IPS = 50_000;
const FAILURE_WINDOW_MS = 60_000;

/**
 * One form for every address: an IPv4-mapped IPv6 address (::ffff:203.0.113.7) is its IPv4 address, and a
 * mapped range (::ffff:203.0.113.0/120) its IPv4 range (DECISIONS.md §2). Both the allow-list entries and
 * the client address go through it, so either side may be written in either form.
 */
function normalizeRange([address, bits]: IpRange): IpRange {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [address, bits];
}

function parseRange(entry: string): IpRange | null {
  try {
    if (entry.includes('/')) return normalizeRange(ipaddr.parseCIDR(entry));
    const address = ipaddr.parse(entry);
    return normalizeRange([address, address.kind() === 'ipv4' ? 32 : 128]);
  } catch {
    return null;
  }
}

function ipAllowed(ranges: IpRange[], ip: string): boolean {
  if (ranges.length === 0) return true;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns an IPv4-mapped client address into IPv4, the same form normalizeRange gives entries.
    address = ipaddr.process(ip);
  } catch {
    return false;
  }
  return ranges.some(([range, bits]) => address.kind() === range.kind() && address.match([range, bits] as never));
}

function presentedKey(request: FastifyRequest): string | null {
  const authorization = request.headers.authorization;
  const header = request.headers['x-api-key'];
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
    // Another scheme (a proxy's Basic credentials) leaves the key to X-API-Key when one is sent (DECISIONS §2).
    if (typeof header !== 'string') return null;
  }
  return typeof header === 'string' ? header.trim() : null;
}

function setUsageHeaders(reply: FastifyReply, count: number, limit: number | null, resetsAt: string) {
  reply.header('x-usage-count', String(count));
  if (limit !== null) reply.header('x-usage-limit', String(limit));
  reply.header('x-usage-resets', resetsAt);
}

/** Why a key found in the cache no longer works, or null while it does: expiry is checked per request. */
function expired(record: KeyRecord, now: number): string | null {
  if (record.expiresAt && record.expiresAt.getTime() <= now) return 'The API key has expired.';
  if (record.secretExpiresAt && record.secretExpiresAt.getTime() <= now) {
    return 'This secret of the API key was rolled and its grace period has ended; use the new secret.';
  }
  return null;
}

/**
 * Authenticates every route of the scope it is registered in: the key, then the IP allow-list, the
 * scope, the add-on, and the monthly usage limit (DECISIONS.md §1 order). Keys are cached for cacheTtlMs,
 * with their scopes and the company (or sandbox) they work on, so a request costs no database work for
 * them, and a revoked key or changed company setting bites within that time on every instance. Every
 * route in this scope must declare the scope it needs (config.scope): one without it fails at start.
 */
export const authPlugin = fp<AuthOptions>(
  async (app, options) => {
    const cache = new Map<string, CachedKey>();
    const loading = new Map<string, Promise<CachedKey>>();
    const unknownKeys = new Map<string, number>();
    const failures = new Map<string, { count: number; windowStart: number }>();
    const failureLimit = options.unauthenticatedPerMinute ?? 0;

    /** Seconds until the IP may try unknown keys again, or 0 when it is under the limit. */
    function blockedFor(ip: string, now: number): number {
      if (failureLimit === 0) return 0;
      const window = failures.get(ip);
      if (!window || now - window.windowStart >= FAILURE_WINDOW_MS || window.count < failureLimit) return 0;
      return Math.ceil((window.windowStart + FAILURE_WINDOW_MS - now) / 1000);
    }

    function failed(ip: string, message: string): AppError {
      if (failureLimit > 0) {
        const now = Date.now();
        const window = failures.get(ip);
        if (!window || now - window.windowStart >= FAILURE_WINDOW_MS) {
          if (!window && failures.size >= MAX_TRACKED_IPS) failures.delete(failures.keys().next().value as string);
          failures.set(ip, { count: 1, windowStart: now });
        } else {
          window.count += 1;
        }
      }
      return new AppError('unauthorized', message);
    }

    function knownUnknown(keyHash: string): boolean {
      const at = unknownKeys.get(keyHash);
      if (at === undefined) return false;
      if (Date.now() - at < options.cacheTtlMs) return true;
      unknownKeys.delete(keyHash);
      return false;
    }

    async function lookup(keyHash: string): Promise<CachedKey> {
      const cached = cache.get(keyHash);
      if (cached && Date.now() - cached.loadedAt < options.cacheTtlMs) return cached;
      let pending = loading.get(keyHash);
      if (!pending) {
        pending = findActiveKey(options.db, keyHash)
          .then(async (record) => {
            // A test key works on the company's sandbox, made on its first use.
            const sandboxId = record?.mode === 'test' ? (record.sandboxId ?? (await ensureSandbox(options.db, record.companyId))) : null;
            const entry: CachedKey = {
              record,
              principal: record && {
                companyId: sandboxId ?? record.companyId,
                keyCompanyId: record.companyId,
                mode: record.mode,
                userId: record.userId,
                apiKeyId: record.apiKeyId,
                keyPrefix: record.keyPrefix,
                scopes: new Set(record.scopes),
                addons: new Set(record.addons),
              },
              allowedRanges: (record?.allowedIps ?? []).map(parseRange).filter((range) => range !== null),
              monthlyRequestLimit: sandboxId ? null : (record?.monthlyRequestLimit ?? null),
              loadedAt: Date.now(),
            };
            if (record) {
              if (cache.size >= MAX_CACHED_KEYS) cache.delete(cache.keys().next().value as string);
              cache.delete(keyHash);
              cache.set(keyHash, entry);
            } else {
              cache.delete(keyHash);
              if (unknownKeys.size >= MAX_NEGATIVE_KEYS) unknownKeys.delete(unknownKeys.keys().next().value as string);
              unknownKeys.set(keyHash, Date.now());
            }
            return entry;
          })
          .finally(() => loading.delete(keyHash));
        loading.set(keyHash, pending);
      }
      return pending;
    }

    app.decorateRequest('principal', null as unknown as Principal);
    app.decorate('forgetApiKey', (apiKeyId: string) => {
      for (const [keyHash, entry] of cache) if (entry.record?.apiKeyId === apiKeyId) cache.delete(keyHash);
    });

    app.addHook('onRoute', (route) => {
      const scope = route.config?.scope;
      if (!scope) throw new Error(`${String(route.method)} ${route.url} declares no scope: add config.scope ('<area>:read' or '<area>:write')`);
      // Documented on the operation (src/plugins/openapi-finish.ts), as the ETag is.
      if (route.schema) route.schema = { ...route.schema, [SCOPE_OPERATION_MARK]: scope } as typeof route.schema;
    });

    app.addHook('onRequest', async (request, reply) => {
      const apiKey = presentedKey(request);
      const keyHash = apiKey && API_KEY_PATTERN.test(apiKey) ? hashApiKey(apiKey) : null;
      // An IP that failed authentication too often is refused before any lookup, unless its key is one
      // this instance already knows to be valid (clients behind one NAT keep working).
      const wait = blockedFor(request.ip, Date.now());
      if (wait > 0 && !(keyHash && cache.get(keyHash)?.record)) {
        reply.header('retry-after', String(wait));
        throw new AppError('rate_limited', `Too many requests without a valid API key from this address; retry in ${wait} s.`);
      }
      if (!keyHash) throw failed(request.ip, 'A valid API key is required: send Authorization: Bearer <key>.');
      if (knownUnknown(keyHash)) throw failed(request.ip, 'The API key is unknown or revoked.');
      const entry = await lookup(keyHash);
      if (!entry.record || !entry.principal) throw failed(request.ip, 'The API key is unknown or revoked.');
      const { record, principal, monthlyRequestLimit } = entry;
      const expiry = expired(record, Date.now());
      if (expiry) throw failed(request.ip, expiry);
      // From here on every log line of the request (its completion line too) names the company and the key.
      request.log = request.log.child({ company_uuid: principal.companyId, key_prefix: record.keyPrefix });
      if (!ipAllowed(entry.allowedRanges, request.ip)) {
        // Refused before it counts (DECISIONS.md §8), but it still shows the company's current usage.
        const usage = await options.usage.peek(principal.companyId);
        setUsageHeaders(reply, usage.count, monthlyRequestLimit, usage.resetsAt);
        throw new AppError('ip_restricted', 'This API key may not be used from this IP address.');
      }
      options.lastUsed.used(record.apiKeyId);
      const { addon, scope } = request.routeOptions.config ?? {};
      const refusal =
        scope && !scopeAllows(principal.scopes, scope)
          ? new AppError('insufficient_scope', `This API key lacks the scope this endpoint needs: ${scope}.`)
          : addon && !principal.addons.has(addon)
            ? new AppError('addon_required', `This endpoint needs the '${addon}' add-on on the company account.`)
            : null;
      // A request refused for its scope or add-on counts even past the limit: only ip_restricted and
      // usage_limit_exceeded do not (DECISIONS.md §8). The sandbox counts apart, with no limit.
      const usage = await options.usage.count(principal.companyId, refusal ? null : monthlyRequestLimit);
      setUsageHeaders(reply, usage.count, monthlyRequestLimit, usage.resetsAt);
      if (refusal) throw refusal;
      if (!usage.allowed) {
        throw new AppError('usage_limit_exceeded', 'The monthly request limit of this company is used up.');
      }
      request.principal = principal;
    });
  },
  { name: 'auth', encapsulate: false },
);
