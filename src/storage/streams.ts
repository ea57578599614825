import { Readable, Transform } from 'node:stream';

/**
 * Reads the first bytes of a stream (fewer when it ends sooner) and returns them with a stream of the
 * whole content, so the start can be inspected before anything is written and nothing beyond it is buffered.
 * It reads through the stream's async iterator, which settles on data, end, error and also on a stream
 * that was destroyed before this was called (a multipart part cut short): a wait here always ends.
 */
export async function peek(source: Readable, size: number): Promise<{ head: Buffer; whole: Readable; drain(): void }> {
  const iterator = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let length = 0;
  let ended = false;
  while (length < size) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    chunks.push(next.value);
    length += next.value.length;
  }
  const head = Buffer.concat(chunks);
  async function* rest() {
    yield head;
    while (!ended) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  /** Reads and drops the rest, so the parser moves on to the next part. */
  const drain = () => {
    void (async () => {
      while (!ended) ended = (await iterator.next().catch(() => ({ done: true as const }))).done === true;
    })();
  };
  return { head, whole: Readable.from(rest(), { objectMode: false }), drain };
}

/** Counts the bytes passing through. */
export function byteCounter(): Transform & { bytes: number } {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      counter.bytes += chunk.length;
      callback(null, chunk);
    },
  }) as Transform & { bytes: number };
  counter.bytes = 0;
  return counter;
}
