import type { Db } from '../../db/client.js';
import type { Actor } from '../../auth/principal.js';
import { assertIfMatch } from '../../shared/etag.js';
import { invalidField } from '../../errors.js';
import * as repository from './numbering.repository.js';
import type { NumberKind } from './numbering.repository.js';
import type { KindSettings, KindSettingsBody, UpdateNumberingBody } from './numbering.schemas.js';

export type { NumberKind } from './numbering.repository.js';

/**
 * Documents are numbered when their transaction commits, by the deferred trigger number_document()
 * (migration 0012): the company's counter row is locked only for that trigger and the commit, so concurrent
 * creates get consecutive numbers and a rolled-back create leaves no gap. A one-time override is used once;
 * numbering then continues at max(next_number, override + 1). A create answers with its record as committed:
 * this fills in the number the document got, e.g. INV-0042: the one the trigger sent with the commit, else
 * read back.
 */
export async function withNumber<T extends { uuid: string }>(db: Db, companyId: string, kind: NumberKind, record: T): Promise<T> {
  let number = repository.takeNoticedNumber(record.uuid);
  if (number === undefined) {
    try {
      number = await repository.readDocumentNumber(db, companyId, kind, record.uuid);
    } catch {
      // The create is committed: one failed read (a connection cut between the two) must not answer an error
      // that a client would retry into a second document. A second failure does answer 500.
      number = await repository.readDocumentNumber(db, companyId, kind, record.uuid);
    }
  }
  return { ...record, [`${kind}_number`]: number };
}

function toSettings(counter: repository.CounterSettings): KindSettings {
  return {
    prefix: counter.prefix,
    padding: counter.padding,
    next_number: counter.overrideNextNumber ?? counter.nextNumber,
    next_number_formatted: counter.nextFormatted,
    has_override: counter.overrideNextNumber !== null,
  };
}

export async function getNumbering(db: Db, companyId: string) {
  const [invoice, estimate] = await Promise.all([
    repository.readCounter(db, companyId, 'invoice'),
    repository.readCounter(db, companyId, 'estimate'),
  ]);
  return { invoice: toSettings(invoice), estimate: toSettings(estimate) };
}

async function applyKind(tx: Db, companyId: string, kind: 'invoice' | 'estimate', body: KindSettingsBody) {
  // Locked so no document can take the override number between the "already used" check and the write.
  await repository.lockCounter(tx, companyId, kind);
  const values: Parameters<typeof repository.writeCounter>[3] = {};
  if (body.prefix !== undefined) values.prefix = body.prefix;
  if (body.padding !== undefined) values.padding = body.padding;
  if (body.override_next_number !== undefined) {
    const override = body.override_next_number;
    if (override !== null && (await repository.numberUsed(tx, companyId, kind, override))) {
      throw invalidField(`${kind}.override_next_number`, 'is a number already used; numbers are never reused');
    }
    values.overrideNextNumber = override;
  }
  if (Object.keys(values).length > 0) await repository.writeCounter(tx, companyId, kind, values);
}

/**
 * Applies the settings sent; with If-Match, only while the settings are still those of that ETag (GET
 * /numbering's): both counters are locked and the settings read and compared first (412 otherwise).
 */
export async function updateNumbering(db: Db, actor: Pick<Actor, 'companyId' | 'ifMatch'>, body: UpdateNumberingBody): Promise<void> {
  const { companyId } = actor;
  await db.transaction(async (tx) => {
    if (actor.ifMatch !== undefined) {
      await repository.lockCounter(tx, companyId, 'invoice');
      await repository.lockCounter(tx, companyId, 'estimate');
      assertIfMatch(actor.ifMatch, await getNumbering(tx, companyId));
    }
    if (body.invoice) await applyKind(tx, companyId, 'invoice', body.invoice);
    if (body.estimate) await applyKind(tx, companyId, 'estimate', body.estimate);
  });
}
