import fp from 'fastify-plugin';
import ipaddr from 'ipaddr.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/client.js';
import { AppError } from '../errors.js';
import { API_KEY_PATTERN, hashApiKey } from '../modules/auth/api-keys.js';
import { findActiveKey, touchKeyLastUsed, type KeyRecord } from '../modules/auth/auth.repository.js';
import type { UsageMeter } from '../modules/auth/usage-meter.js';
import type { Addon, Principal } from '../auth/principal.js';
import { sendNoRoute } from './errors.js';


declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** The company add-on a route needs (403 addon_required without it). */
    addon?: Addon;
  }
}

type IpRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

interface CachedKey {
  record: KeyRecord | null;
  principal: Principal | null;
  allowedRanges: IpRange[];
  loadedAt: number;
}

export interface AuthOptions {
  db: Db;
  usage: UsageMeter;
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
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match ? match[1] : null;
  }
  const header = request.headers['x-api-key'];
  return typeof header === 'string' ? header.trim() : null;
}

function setUsageHeaders(reply: FastifyReply, count: number, limit: number | null, resetsAt: string) {
  reply.header('x-usage-count', String(count));
  if (limit !== null) reply.header('x-usage-limit', String(limit));
  reply.header('x-usage-resets', resetsAt);
}

/**
 * Authenticates every route of the scope it is registered in: the key, then the IP allow-list, the
 * add-on, and the monthly usage limit (DECISIONS.md §2 order). Keys are cached for cacheTtlMs, so a
 * revoked key or changed company setting bites within that time on every instance.
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
          .then((record) => {
            const entry: CachedKey = {
              record,
              principal: record && {
                companyId: record.companyId,
                userId: record.userId,
                apiKeyId: record.apiKeyId,
                keyPrefix: record.keyPrefix,
                addons: new Set(record.addons),
              },
              allowedRanges: (record?.allowedIps ?? []).map(parseRange).filter((range) => range !== null),
              loadedAt: Date.now(),
            };
            if (record) {
              touchKeyLastUsed(options.db, record.apiKeyId).catch((error: unknown) =>
                app.log.warn({ err: error }, 'could not record the API key as used'),
              );
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
      const { record, principal } = entry;
      // From here on every log line of the request (its completion line too) names the company and the key.
      request.log = request.log.child({ company_uuid: record.companyId, key_prefix: record.keyPrefix });
      if (!ipAllowed(entry.allowedRanges, request.ip)) {
        // Refused before it counts (DECISIONS.md §8), but it still shows the company's current usage.
        const usage = await options.usage.peek(record.companyId);
        setUsageHeaders(reply, usage.count, record.monthlyRequestLimit, usage.resetsAt);
        throw new AppError('ip_restricted', 'This API key may not be used from this IP address.');
      }
      const addon = request.routeOptions.config?.addon;
      const usage = await options.usage.count(record.companyId, record.monthlyRequestLimit);
      setUsageHeaders(reply, usage.count, record.monthlyRequestLimit, usage.resetsAt);
      if (addon && !principal.addons.has(addon)) {
        throw new AppError('addon_required', `This endpoint needs the '${addon}' add-on on the company account.`);
      }
      if (!usage.allowed) {
        throw new AppError('usage_limit_exceeded', 'The monthly request limit of this company is used up.');
      }
      request.principal = principal;
    });

    // An unknown path inside the authenticated scope needs a key too: 401 before 404 or 405 (DECISIONS.md §1).
    app.setNotFoundHandler(sendNoRoute);
  },
  { name: 'auth', encapsulate: false },
);
