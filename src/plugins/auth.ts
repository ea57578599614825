import fp from 'fastify-plugin';
import ipaddr from 'ipaddr.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/client.js';
import { AppError } from '../errors.js';
import { API_KEY_PATTERN, hashApiKey } from '../modules/auth/api-keys.js';
import { findActiveKey, touchKeyLastUsed, type KeyRecord } from '../modules/auth/auth.repository.js';
import type { UsageMeter } from '../modules/auth/usage-meter.js';
import { sendError } from './errors.js';

export type Addon = 'photos' | 'numbering';

export interface Principal {
  companyId: string;
  userId: string;
  apiKeyId: string;
  /** The key's public prefix (never the key): names the key in logs and in the admin CLI. */
  keyPrefix: string;
  addons: ReadonlySet<string>;
}

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
}

const MAX_CACHED_KEYS = 50_000;

function parseRange(entry: string): IpRange | null {
  try {
    if (entry.includes('/')) return ipaddr.parseCIDR(entry);
    const address = ipaddr.parse(entry);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return null;
  }
}

function ipAllowed(ranges: IpRange[], ip: string): boolean {
  if (ranges.length === 0) return true;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.process(ip);
  } catch {
    return false;
  }
  return ranges.some(([range, bits]) => {
    if (address.kind() === range.kind()) return address.match([range, bits] as never);
    // An IPv4 rule also matches its IPv4-mapped IPv6 form and the other way round.
    if (range.kind() === 'ipv4' && address.kind() === 'ipv6') {
      const v6 = address as ipaddr.IPv6;
      return v6.isIPv4MappedAddress() && v6.toIPv4Address().match([range, bits] as never);
    }
    return false;
  });
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
            }
            if (cache.size >= MAX_CACHED_KEYS) cache.delete(cache.keys().next().value as string);
            cache.delete(keyHash);
            cache.set(keyHash, entry);
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
      if (!apiKey || !API_KEY_PATTERN.test(apiKey)) {
        throw new AppError('unauthorized', 'A valid API key is required: send Authorization: Bearer <key>.');
      }
      const entry = await lookup(hashApiKey(apiKey));
      if (!entry.record || !entry.principal) {
        throw new AppError('unauthorized', 'The API key is unknown or revoked.');
      }
      // From here on every log line of the request (its completion line too) names the company and the key.
      request.log = request.log.child({ company_uuid: entry.record.companyId, key_prefix: entry.record.keyPrefix });
      if (!ipAllowed(entry.allowedRanges, request.ip)) {
        throw new AppError('ip_restricted', 'This API key may not be used from this IP address.');
      }
      const { record, principal } = entry;
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

    // An unknown path inside the authenticated scope needs a key too: 401 before 404 (DECISIONS.md §1).
    app.setNotFoundHandler((request, reply) =>
      sendError(reply, new AppError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`)),
    );
  },
  { name: 'auth', encapsulate: false },
);
