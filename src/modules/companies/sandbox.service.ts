import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import type { Storage } from '../../storage/storage.js';
import * as repository from './sandbox.repository.js';

/**
 * The sandbox of a company (DECISIONS §12): a company of its own tied to the live one, so tenancy keeps its
 * data apart and the whole API works there unchanged. Made on the first request of a test key.
 */

/**
 * The live company's sandbox, made now when it does not exist yet (the live company's record, add-ons and
 * numbering settings; numbers start at 1), holding a copy of every user of the live company.
 */
export async function ensureSandbox(db: Db, liveCompanyId: string): Promise<string> {
  return db.transaction(async (tx) => {
    let sandbox = await repository.findSandbox(tx, liveCompanyId);
    if (!sandbox) {
      sandbox = await repository.insertSandbox(tx, liveCompanyId, newRecordId());
      if (sandbox) await repository.copyNumberingSettings(tx, liveCompanyId, sandbox.uuid);
      // Made by a concurrent request meanwhile: use that one.
      else sandbox = await repository.findSandbox(tx, liveCompanyId);
      if (!sandbox) throw new Error(`No live company ${liveCompanyId} to make a sandbox for`);
    }
    await repository.mirrorUsers(tx, liveCompanyId, sandbox.uuid);
    return sandbox.uuid;
  });
}

/** After a user is added to a live company: its sandbox, if there is one, gets the user too. */
export async function mirrorUsersToSandbox(db: Db, liveCompanyId: string): Promise<void> {
  const sandbox = await repository.findSandbox(db, liveCompanyId);
  if (sandbox) await repository.mirrorUsers(db, liveCompanyId, sandbox.uuid);
}

/**
 * Empties a sandbox in one transaction: every record, event, webhook endpoint and delivery and stored
 * idempotent answer goes; the users, the keys, the settings and the usage count stay, and the document
 * numbers start again at 1. The photo files go after the commit (a file that cannot be removed stays
 * behind, unreferenced).
 */
export async function emptySandbox(db: Db, storage: Storage, sandboxId: string): Promise<void> {
  const photoKeys = await db.transaction(async (tx) => {
    await repository.lockSandbox(tx, sandboxId);
    const keys = await repository.photoStorageKeys(tx, sandboxId);
    for (const table of await repository.sandboxDataTables(tx)) await repository.deleteCompanyRows(tx, table, sandboxId);
    await repository.resetNumbering(tx, sandboxId);
    return keys;
  });
  await Promise.allSettled(photoKeys.map((key) => storage.remove(key)));
}
