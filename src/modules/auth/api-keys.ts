import { createHash, randomBytes } from 'node:crypto';

/** Keys look like fsc_live_<43 base64url characters> (32 random bytes). */
export const API_KEY_PATTERN = /^fsc_live_[A-Za-z0-9_-]{43}$/;
const KEY_PREFIX_LENGTH = 'fsc_live_'.length + 8;

export interface GeneratedKey {
  apiKey: string;
  keyPrefix: string;
  keyHash: string;
}

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

export function generateApiKey(): GeneratedKey {
  const apiKey = `fsc_live_${randomBytes(32).toString('base64url')}`;
  return { apiKey, keyPrefix: apiKey.slice(0, KEY_PREFIX_LENGTH), keyHash: hashApiKey(apiKey) };
}
