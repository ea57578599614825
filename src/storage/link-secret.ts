import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { linkSecrets } from '../db/schema/index.js';

const THE_SECRET = 1;

/**
 * The link-signing secret kept in the database, made by the first caller: every instance of one database,
 * before and after a restart, signs and verifies links with the same one. Used when PHOTO_URL_SECRET is unset.
 */
export async function sharedLinkSecret(db: Db): Promise<string> {
  await db
    .insert(linkSecrets)
    .values({ id: THE_SECRET, secret: randomBytes(32).toString('hex') })
    .onConflictDoNothing();
  const [row] = await db.select({ secret: linkSecrets.secret }).from(linkSecrets).where(eq(linkSecrets.id, THE_SECRET));
  return row!.secret;
}
