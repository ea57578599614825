import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.js';
import { linkWindow } from './storage.js';

export interface SignedLinkQuery {
  expires: number;
  signature: string;
}

export interface VerifiedToken {
  subject: string;
  expires: number;
}

const TOKEN = /^([A-Za-z0-9_-]{1,200})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/**
 * The one HMAC-SHA256 signer of the links the API serves without a key: photo file links (key +
 * expiry in the query) and share-link tokens (purpose, subject and expiry in one path segment).
 * The signed messages differ in shape (a purpose line), so a signature made for one kind of link
 * never verifies as another.
 */
export class UrlSigner {
  constructor(private readonly secret: string) {}

  private mac(message: string): Buffer {
    return createHmac('sha256', this.secret).update(message).digest();
  }

  sign(key: string, expires: number): string {
    return this.mac(`${key}\n${expires}`).toString('hex');
  }

  /** A link query valid for at least ttlSeconds from now, the same for every call within one window. */
  link(key: string, ttlSeconds: number, now = Date.now()): SignedLinkQuery {
    const expires = linkWindow(ttlSeconds, now).expiresAt;
    return { expires, signature: this.sign(key, expires) };
  }

  /** True when the signature is this key's and the link has not expired; compared in constant time. */
  verify(key: string, expires: string | undefined, signature: string | undefined, now = Date.now()): boolean {
    // Only the exact text issued: no leading zero on the expiry, the signature in lower-case hex.
    if (!expires || !/^[1-9]\d{0,11}$/.test(expires) || !signature || !/^[0-9a-f]{64}$/.test(signature)) return false;
    const expected = Buffer.from(this.sign(key, Number(expires)), 'hex');
    const given = Buffer.from(signature, 'hex');
    return timingSafeEqual(expected, given) && Number(expires) * 1000 > now;
  }

  private tokenMac(purpose: string, subject: string, expires: number): Buffer {
    return this.mac(`token\n${purpose}\n${subject}\n${expires}`);
  }

  /** `<subject>.<expires>.<signature>`: subject must be base64url; the token is URL-path safe. */
  token(purpose: string, subject: string, ttlSeconds: number, now = Date.now()): { token: string; expires: number } {
    const expires = Math.floor(now / 1000) + ttlSeconds;
    return { token: `${subject}.${expires}.${this.tokenMac(purpose, subject, expires).toString('base64url')}`, expires };
  }

  /** The subject and expiry of a token of this purpose that is authentic and unexpired, else null. */
  verifyToken(purpose: string, token: string, now = Date.now()): VerifiedToken | null {
    const match = TOKEN.exec(token);
    if (!match) return null;
    const [, subject, expiresText, signature] = match as unknown as [string, string, string, string];
    // Only the exact text issued: an expiry without leading zeros, and the signature's own base64url text
    // (decoding alone would ignore the unused low bits of its last character).
    if (!/^[1-9]\d*$/.test(expiresText)) return null;
    const expires = Number(expiresText);
    const given = Buffer.from(signature, 'utf8');
    const expected = Buffer.from(this.tokenMac(purpose, subject, expires).toString('base64url'), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return expires * 1000 > now ? { subject, expires } : null;
  }
}

const signers = new WeakMap<Config, UrlSigner>();

/**
 * The process's signer for a configuration, made once: photo links and share links use the same one.
 * The server fills PHOTO_URL_SECRET, when it is unset, with the secret the database keeps (link-secret.ts).
 * An app built without either (tests) gets a random secret per process: its links stop working on restart
 * and are valid only on the instance that made them.
 */
export function linkSigner(config: Config): UrlSigner {
  let signer = signers.get(config);
  if (!signer) {
    signer = new UrlSigner(config.PHOTO_URL_SECRET ?? randomBytes(32).toString('hex'));
    signers.set(config, signer);
  }
  return signer;
}
