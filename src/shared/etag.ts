import { hash } from 'node:crypto';
import { AppError } from '../errors.js';
import { OK_JSON_HEAD } from './envelope.js';

/**
 * The strong ETag of a record: a hash of its JSON exactly as the API answers it (`data` of the envelope).
 * Every answer and every If-Match comparison takes it from here, so they always agree.
 */
export function etagOf(record: unknown): string {
  return etagOfJson(JSON.stringify(record));
}

/** The ETag of a record given as its JSON text (the `data` part of a serialized envelope). */
export function etagOfJson(json: string): string {
  // One-shot hashing: no Hash object per answer.
  return `"${hash('sha256', json, 'base64url').slice(0, 32)}"`;
}

/**
 * The JSON text of `data` in a serialized success envelope, or undefined for anything else. ok() builds
 * `{success: true, data}`, and JSON.stringify of that is exactly OK_JSON_HEAD + JSON.stringify(data) + '}',
 * so etagOfJson of this slice equals etagOf(data).
 */
export function envelopeDataJson(payload: string): string | undefined {
  if (!payload.startsWith(OK_JSON_HEAD) || !payload.endsWith('}')) return undefined;
  return payload.slice(OK_JSON_HEAD.length, -1);
}

/** A parsed If-Match / If-None-Match header: `*` or the listed entity tags (weak ones keep their W/). */
export type EntityTags = '*' | string[];

/** Parses an If-Match or If-None-Match header; undefined when absent, no tags when sent empty. */
export function parseEntityTags(header: string | string[] | undefined): EntityTags | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  // A header sent empty names no ETag: an If-Match that matches nothing, never an unconditional write.
  if (value.trim() === '*') return '*';
  const tags = value.match(/(?:W\/)?"[^"]*"/g) ?? [];
  return tags;
}

/** If-Match uses the strong comparison: a weak tag never matches. `*` matches any existing record. */
export function ifMatchAllows(ifMatch: EntityTags | undefined, currentEtag: string): boolean {
  if (ifMatch === undefined || ifMatch === '*') return true;
  return ifMatch.includes(currentEtag);
}

/** If-None-Match uses the weak comparison: W/"x" matches "x". */
export function ifNoneMatchMatches(ifNoneMatch: EntityTags | undefined, currentEtag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch === '*') return true;
  return ifNoneMatch.some((tag) => tag.replace(/^W\//, '') === currentEtag);
}

/** Throws 412 precondition_failed when the If-Match header names none of the record's current ETags. */
export function assertIfMatch(ifMatchHeader: string | string[] | undefined, current: unknown): void {
  const ifMatch = parseEntityTags(ifMatchHeader);
  // Without the header the write is unconditional: the record's ETag is not computed.
  if (ifMatch !== undefined && !ifMatchAllows(ifMatch, etagOf(current))) {
    throw new AppError('precondition_failed', "If-Match does not match the record's current ETag; nothing was changed.");
  }
}
