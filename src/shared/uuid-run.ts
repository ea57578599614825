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
