import { v7 as uuidv7 } from 'uuid';

/** Random bytes for ids, drawn 4 KiB at a time instead of once per id (the uuid package draws per call). */
const idRandom = { pool: new Uint8Array(4096), at: 4096 };
const idOptions: { random?: Uint8Array; msecs?: number; seq?: number } = {};

/** The next 16 random bytes of the pool. */
function randomBytes(): Uint8Array {
  if (idRandom.at + 16 > idRandom.pool.length) {
    crypto.getRandomValues(idRandom.pool);
    idRandom.at = 0;
  }
  const bytes = idRandom.pool.subarray(idRandom.at, idRandom.at + 16);
  idRandom.at += 16;
  return bytes;
}

/**
 * A UUIDv7 ordered by its millisecond and random within it: for ids whose order within a millisecond means
 * nothing (request ids, events, which the feed orders by seq, webhook deliveries).
 */
export function randomTimeOrderedId(): string {
  idOptions.random = randomBytes();
  idOptions.msecs = undefined;
  idOptions.seq = undefined;
  return uuidv7(idOptions);
}

/** The millisecond and the 32-bit counter of the last record id (RFC 9562 §6.2, method 1). */
const recordClock = { msecs: -Infinity, seq: 0 };

/**
 * A record's uuid: a UUIDv7 that also counts within its millisecond, so ids made one after another in this
 * process sort in that order (a tie-break of list order). The counter starts at a random value each
 * millisecond, as the uuid package's own v7 does; the random bytes come from the pool.
 */
export function newRecordId(): string {
  const random = randomBytes();
  const now = Date.now();
  if (now > recordClock.msecs) {
    recordClock.msecs = now;
    recordClock.seq = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9];
  } else {
    recordClock.seq = (recordClock.seq + 1) | 0;
    // The counter ran over within one millisecond: borrow the next one, as the uuid package does.
    if (recordClock.seq === 0) recordClock.msecs++;
  }
  idOptions.random = random;
  idOptions.msecs = recordClock.msecs;
  idOptions.seq = recordClock.seq;
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
