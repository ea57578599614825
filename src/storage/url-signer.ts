import { createHmac, timingSafeEqual } from 'node:crypto';
import { linkWindow } from './storage.js';

export interface SignedLinkQuery {
  expires: number;
  signature: string;
}

/** HMAC-SHA256 signatures for expiring links to stored files. */
export class UrlSigner {
  constructor(private readonly secret: string) {}

  sign(key: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${key}\n${expires}`).digest('hex');
  }

  /** A link query valid for at least ttlSeconds from now, the same for every call within one window. */
  link(key: string, ttlSeconds: number, now = Date.now()): SignedLinkQuery {
    const expires = linkWindow(ttlSeconds, now).expiresAt;
    return { expires, signature: this.sign(key, expires) };
  }

  /** True when the signature is this key's and the link has not expired; compared in constant time. */
  verify(key: string, expires: string | undefined, signature: string | undefined, now = Date.now()): boolean {
    if (!expires || !/^\d{1,12}$/.test(expires) || !signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
    const expected = Buffer.from(this.sign(key, Number(expires)), 'hex');
    const given = Buffer.from(signature, 'hex');
    return timingSafeEqual(expected, given) && Number(expires) * 1000 > now;
  }
}
