import type { UrlSigner } from '../../storage/url-signer.js';

export type DocumentKind = 'estimate' | 'invoice';

/** The path segment of each kind under /share. */
export const SHARE_SEGMENT: Record<DocumentKind, string> = { estimate: 'estimates', invoice: 'invoices' };

export interface SharedRecord {
  companyId: string;
  uuid: string;
}

const UUID_HEX = /^[0-9a-f]{32}$/;

/** The company and record ids packed into 32 bytes, base64url: the token says which record it opens. */
function subjectOf(record: SharedRecord): string {
  const bytes = Buffer.from(`${record.companyId}${record.uuid}`.replaceAll('-', ''), 'hex');
  return bytes.toString('base64url');
}

function recordOf(subject: string): SharedRecord | null {
  const bytes = Buffer.from(subject, 'base64url');
  if (bytes.length !== 32) return null;
  const hex = bytes.toString('hex');
  const uuid = (part: string) => (UUID_HEX.test(part) ? `${part.slice(0, 8)}-${part.slice(8, 12)}-${part.slice(12, 16)}-${part.slice(16, 20)}-${part.slice(20)}` : null);
  const companyId = uuid(hex.slice(0, 32));
  const recordId = uuid(hex.slice(32));
  return companyId && recordId ? { companyId, uuid: recordId } : null;
}

/** A signed, expiring token for one record; the kind is part of what is signed. */
export function shareToken(signer: UrlSigner, kind: DocumentKind, record: SharedRecord, ttlSeconds: number, now = Date.now()) {
  return signer.token(`share:${kind}`, subjectOf(record), ttlSeconds, now);
}

/** The record a token opens, or null when it is malformed, tampered with, of another kind or expired. */
export function openShareToken(signer: UrlSigner, kind: DocumentKind, token: string, now = Date.now()): SharedRecord | null {
  const verified = signer.verifyToken(`share:${kind}`, token, now);
  return verified ? recordOf(verified.subject) : null;
}

export function sharePath(kind: DocumentKind, token: string): string {
  return `/share/${SHARE_SEGMENT[kind]}/${token}`;
}
