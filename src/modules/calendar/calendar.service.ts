import { createHash, randomBytes } from 'node:crypto';
import { newRecordId } from '../../shared/ids.js';
import type { Actor } from '../../auth/principal.js';
import type { Db } from '../../db/client.js';
import { completeKeyInTransaction, keyedWrite } from '../../shared/keyed-writes.js';
import { notFound } from '../../errors.js';
import * as repository from './calendar.repository.js';
import type { DocumentRenderer } from '../documents/document-renderer.js';

/** A feed shows visits that ended at most this long ago (DECISIONS §13). */
const FEED_PAST_DAYS = 30;
/** The most visits one feed answers with (bounded work per request, DECISIONS §11). */
export const FEED_MAX_VISITS = 2000;

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** The path of a feed link. */
export const feedPath = (token: string) => `/calendar/${token}`;

async function requireUser(db: Db, companyId: string, userId: string): Promise<void> {
  if (!(await repository.liveUserExists(db, companyId, userId))) throw notFound('User');
}

/**
 * A new feed link for a user of the company: a random token of 256 bits, of which only the SHA-256 is
 * stored. The link does not expire; earlier links keep working until revoked. A keyed request completes its
 * key in the transaction that stores the link (its replay answers the same link).
 */
export async function createCalendarLink(db: Db, actor: Actor, userId: string, baseUrl: string): Promise<{ url: string }> {
  const { companyId } = actor;
  await requireUser(db, companyId, userId);
  const token = randomBytes(32).toString('base64url');
  const link = { url: `${baseUrl}${feedPath(token)}` };
  return keyedWrite(actor, () =>
    db.transaction(async (tx) => {
      await repository.insertCalendarLink(tx, { companyId, uuid: newRecordId(), userId, tokenHash: hashOf(token) });
      await completeKeyInTransaction(tx, actor, link);
      return link;
    }),
  );
}

/** Revokes every link of the user: the next request of any of them, on any instance, is 404. */
export async function revokeCalendarLinks(db: Db, companyId: string, userId: string): Promise<void> {
  await requireUser(db, companyId, userId);
  await repository.deleteCalendarLinks(db, companyId, userId);
}

/**
 * The iCalendar text a token opens; 404 for an unknown or revoked token. A large feed is written by the
 * rendering pool, within the company's share of it (503 when that is full), never on the event loop.
 */
export async function calendarFeed(db: Db, renderer: DocumentRenderer, token: string, host: string, now = new Date()): Promise<string> {
  const link = await repository.findCalendarLink(db, hashOf(token));
  if (!link) throw notFound('Calendar');
  const since = new Date(now.getTime() - FEED_PAST_DAYS * 24 * 60 * 60 * 1000);
  const visits = await repository.feedVisits(db, link.companyId, link.userId, since, FEED_MAX_VISITS);
  return renderer.calendar({ name: `Visits: ${link.firstName} ${link.lastName}`, host, visits }, link.companyId);
}
