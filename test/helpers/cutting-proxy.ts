import net from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that cuts a connection at a chosen statement: the fault of a pooler or
 * a network that dies while a COMMIT is in flight. It reads the client's messages of the wire protocol
 * (simple queries and the Parse/Bind of the extended protocol) and the server's ReadyForQuery, so it knows
 * each statement's text and whether it runs inside a transaction.
 *
 * - `before`: the statement never reaches the server; the connection is closed (an open transaction rolls back).
 * - `after`: the statement reaches the server and runs (a COMMIT commits); the connection is closed before
 *   its answer reaches the client, which cannot know the outcome.
 */
export type CutMoment = 'before' | 'after';

/** Which statement to cut at: its text, and whether the connection was outside a transaction (autocommit). */
export type CutWhen = (statement: string, idle: boolean) => boolean;

export interface CuttingProxy {
  port: number;
  /** Cuts the next connection that sends a matching statement; resolves with the statement once cut. */
  cutNext(when: CutWhen, moment: CutMoment): Promise<string>;
  /** How many connections were cut so far. */
  cuts: number;
  close(): Promise<void>;
}

/** The statement that makes a keyed write durable: its COMMIT, or a statement that writes the key outside a transaction. */
export const committingStatement: CutWhen = (statement, idle) =>
  /^\s*commit\b/i.test(statement) || (idle && /insert into "?idempotency_keys/i.test(statement));

interface PendingCut {
  when: CutWhen;
  moment: CutMoment;
  resolve(statement: string): void;
}

export async function startCuttingProxy(target: { host: string; port: number }): Promise<CuttingProxy> {
  let pending: PendingCut | null = null;
  const sockets = new Set<net.Socket>();
  const state = { cuts: 0 };

  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);

    let startup = true;
    let buffered = Buffer.alloc(0);
    /** Statement names of this connection's Parse messages, for a Bind of a statement prepared earlier. */
    const named = new Map<string, string>();
    let idle = true;
    /** Set once a statement was forwarded that this connection is cut after: the server's answer is dropped. */
    let cutAfter: PendingCut | null = null;
    let cutStatement = '';

    upstream.on('data', (chunk: Buffer) => {
      if (cutAfter) {
        // The statement ran: its answer never reaches the client.
        const cut = cutAfter;
        cutAfter = null;
        state.cuts++;
        end();
        cut.resolve(cutStatement);
        return;
      }
      // ReadyForQuery ('Z', length 5, status I | T | E) ends each answer: the last one says whether a
      // transaction is open. (A message split across chunks only delays what is known by one answer.)
      for (let at = chunk.lastIndexOf(0x5a); at >= 0; at = chunk.lastIndexOf(0x5a, at - 1)) {
        if (at + 5 < chunk.length && chunk.readInt32BE(at + 1) === 5) {
          idle = chunk[at + 5] === 0x49;
          break;
        }
      }
      client.write(chunk);
    });

    client.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const forward: Buffer[] = [];
      for (;;) {
        if (startup) {
          if (buffered.length < 4) break;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) break;
          forward.push(buffered.subarray(0, length));
          buffered = buffered.subarray(length);
          startup = false;
          continue;
        }
        if (buffered.length < 5) break;
        const length = buffered.readInt32BE(1);
        if (buffered.length < length + 1) break;
        const message = buffered.subarray(0, length + 1);
        buffered = buffered.subarray(length + 1);
        const statement = statementOf(message, named);
        if (statement !== null && pending && !cutAfter && pending.when(statement, idle)) {
          const cut = pending;
          pending = null;
          if (cut.moment === 'before') {
            // Nothing of this batch reaches the server.
            state.cuts++;
            end();
            cut.resolve(statement);
            return;
          }
          cutAfter = cut;
          cutStatement = statement;
        }
        forward.push(message);
      }
      if (forward.length > 0) upstream.write(Buffer.concat(forward));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    get cuts() {
      return state.cuts;
    },
    cutNext(when, moment) {
      return new Promise((resolve) => {
        pending = { when, moment, resolve };
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The statement text a client message runs: a simple Query, a Parse, or a Bind of a parsed statement. */
function statementOf(message: Buffer, named: Map<string, string>): string | null {
  const type = String.fromCharCode(message[0]);
  const body = message.subarray(5);
  const cString = (from: number) => {
    const zero = body.indexOf(0, from);
    return { text: body.toString('utf8', from, zero), next: zero + 1 };
  };
  if (type === 'Q') return cString(0).text;
  if (type === 'P') {
    const name = cString(0);
    const text = cString(name.next).text;
    named.set(name.text, text);
    // The statement runs at its Bind and Execute; an unnamed one is parsed with each run.
    return name.text === '' ? text : null;
  }
  if (type === 'B') {
    const portal = cString(0);
    const name = cString(portal.next).text;
    return name === '' ? null : (named.get(name) ?? null);
  }
  return null;
}
