import { v7 as uuidv7 } from 'uuid';

/** Random bytes for ids, drawn 4 KiB at a time instead of once per id (the uuid package draws per call). */
const idRandom = { pool: new Uint8Array(4096), at: 4096 };
const idOptions: { random?: Uint8Array } = {};

/**
 * A UUIDv7 ordered by its millisecond and random within it: for ids whose order within a millisecond means
 * nothing (request ids, events, which the feed orders by seq, webhook deliveries). A record's own uuid, a
 * tie-break of list order, comes from the uuid package, which also counts within the millisecond.
 */
export function randomTimeOrderedId(): string {
  if (idRandom.at + 16 > idRandom.pool.length) {
    crypto.getRandomValues(idRandom.pool);
    idRandom.at = 0;
  }
  idOptions.random = idRandom.pool.subarray(idRandom.at, idRandom.at + 16);
  idRandom.at += 16;
  return uuidv7(idOptions);
}

/**
 * `count` distinct UUIDv7s from one: `first` and its successors, its last 48 bits (random in a UUIDv7)
 * counted up. They share first's moment, version and variant, so they are UUIDv7s as good as separately
 * made ones, for one random draw instead of `count` (a one-statement write sends ids for every webhook
 * endpoint a company may have, most of them never used).
 */
export function uuidRun(first: string, count: number): string[] {
  const head = first.slice(0, 24);
  const low = Number.parseInt(first.slice(24), 16);
  const ids = new Array<string>(count);
  for (let index = 0; index < count; index++) ids[index] = head + ((low + index) % 2 ** 48).toString(16).padStart(12, '0');
  return ids;
}
