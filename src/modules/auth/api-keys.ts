import { hash, randomBytes } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import type { KeyMode } from '../../db/schema/index.js';

/** Keys look like fsc_live_<43 base64url characters> (32 random bytes); a test key starts fsc_test_. */
export const API_KEY_PATTERN = /^fsc_(?:live|test)_[A-Za-z0-9_-]{43}$/;
/** The public prefix: `fsc_live_` or `fsc_test_` and 8 characters of the secret (17 in all). */
const KEY_PREFIX_LENGTH = 'fsc_live_'.length + 8;

export interface GeneratedKey {
  apiKey: string;
  keyPrefix: string;
  keyHash: string;
}

export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey, 'hex');
}

export function generateApiKey(mode: KeyMode = 'live'): GeneratedKey {
  const apiKey = `fsc_${mode}_${randomBytes(32).toString('base64url')}`;
  return { apiKey, keyPrefix: apiKey.slice(0, KEY_PREFIX_LENGTH), keyHash: hashApiKey(apiKey) };
}

/** An allowed-IPs entry: an IPv4 or IPv6 address, or a CIDR range of either. */
export function isIpOrCidr(entry: string): boolean {
  return entry.includes('/') ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry);
}
