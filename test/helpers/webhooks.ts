import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { v7 as uuidv7 } from 'uuid';
import type { Database } from '../../src/db/client.js';
import { insertEventWithDeliveries } from '../../src/modules/changes/changes.repository.js';
import type { ResolveHost } from '../../src/modules/webhooks/address-safety.js';

/** Records an event as a write would (with its deliveries) and returns its uuid and JSON data. */
export async function recordEvent(database: Database, companyId: string, type = 'customer.created') {
  const uuid = uuidv7();
  const objectUuid = uuidv7();
  const data = { object: { uuid: objectUuid, first_name: 'Dana', amount: 12.5 } };
  await insertEventWithDeliveries(database.db, { companyId, uuid, type, objectType: type.split('.')[0], objectUuid, data }, uuidv7);
  return { uuid, objectUuid, data };
}

/** A resolver answering fixed addresses for some names, like a DNS server under test control. */
export function fakeResolver(answers: Record<string, string[]>): ResolveHost {
  return async (hostname) => {
    const addresses = answers[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

export interface ReceivedRequest {
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/** A receiver on 127.0.0.1; `handle` decides each answer (default 200). */
export async function startReceiver(
  handle: (request: ReceivedRequest, response: ServerResponse, index: number) => void | Promise<void> = (_request, response) => {
    response.writeHead(200).end('ok');
  },
) {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(entry);
      void handle(entry, response, received.length - 1);
    });
  });
  // TCP connections the receiver accepted, to see whether deliveries reuse them.
  const connections = { count: 0 };
  server.on('connection', () => {
    connections.count++;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    connections,
    async close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Polls until `check` returns a truthy value or the time is up. */
export async function waitFor<T>(check: () => Promise<T> | T, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
