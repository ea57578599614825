/**
 * D1: webhook delivery throughput. A local receiver answers 204 at once; N events with one delivery each
 * to an endpoint of the large company are written not yet due, then made due all at once, and the time
 * until the receiver has every one of them and the database shows them all succeeded gives deliveries/s.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import pg from 'pg';

export interface DeliveryBenchResult {
  deliveries: number;
  seconds: number;
  perSecond: number;
  /** Deliveries not succeeded at the end, plus requests that failed verification of the id header. */
  errors: number;
}

export async function measureDeliveries(options: {
  serverUrl: string;
  databaseUrl: string;
  apiKey: string;
  companyId: string;
  count: number;
  log: (line: string) => void;
}): Promise<DeliveryBenchResult> {
  const { count, log } = options;
  let received = 0;
  let missingId = 0;
  let allArrived: (() => void) | undefined;
  const arrived = new Promise<void>((resolve) => (allArrived = resolve));
  const receiver = createServer((request, response) => {
    if (!request.headers['webhook-id'] || !request.headers['webhook-signature']) missingId++;
    request.resume();
    request.on('end', () => {
      response.writeHead(204).end();
      received++;
      if (received >= count) allArrived?.();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const port = (receiver.address() as { port: number }).port;
  const headers = { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' };
  const created = await fetch(`${options.serverUrl}/api/v1/webhook_endpoints`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: `http://127.0.0.1:${port}/hooks`, events: ['customer.updated'], description: 'bench D1' }),
  });
  const endpoint = ((await created.json()) as { data?: { uuid: string } }).data;
  if (!created.ok || !endpoint) throw new Error(`D1: creating the endpoint answered ${created.status}`);

  const client = new pg.Client({ connectionString: options.databaseUrl });
  await client.connect();
  try {
    // The events and their deliveries, due only in a day: the worker leaves them alone while they are written.
    await client.query(
      `with made as (
         insert into events (company_id, uuid, type, object_type, object_uuid, data)
         select $1, gen_random_uuid(), 'customer.updated', 'customer', object_uuid,
                jsonb_build_object('object', jsonb_build_object('uuid', object_uuid, 'first_name', 'Bench', 'last_name', 'Receiver'),
                                   'previous_attributes', jsonb_build_object('first_name', 'Old'))
         from (select gen_random_uuid() as object_uuid from generate_series(1, $3::int)) objects
         returning company_id, uuid, type
       )
       insert into webhook_deliveries (company_id, uuid, endpoint_uuid, event_uuid, event_type, next_attempt_at)
       select company_id, gen_random_uuid(), $2, uuid, type, now() + interval '1 day' from made`,
      [options.companyId, endpoint.uuid, count],
    );
    log(`D1: ${count} deliveries written; making them due`);
    const started = performance.now();
    await client.query(`update webhook_deliveries set next_attempt_at = now() where company_id = $1 and endpoint_uuid = $2`, [
      options.companyId,
      endpoint.uuid,
    ]);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(60_000, count * 20))));
    // Cleared once the deliveries arrived: a pending timer would keep the bench's process alive for minutes.
    await Promise.race([arrived, timeout]).finally(() => clearTimeout(timer));
    // Done when every delivery is recorded as succeeded, not only received.
    let succeeded = 0;
    for (let attempt = 0; attempt < 200; attempt++) {
      const result = await client.query<{ done: string }>(
        `select count(*) as done from webhook_deliveries where company_id = $1 and endpoint_uuid = $2 and status = 'succeeded'`,
        [options.companyId, endpoint.uuid],
      );
      succeeded = Number(result.rows[0].done);
      if (succeeded >= count) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = (performance.now() - started) / 1000;
    return { deliveries: count, seconds, perSecond: succeeded / seconds, errors: count - succeeded + missingId };
  } finally {
    await fetch(`${options.serverUrl}/api/v1/webhook_endpoints/${endpoint.uuid}`, { method: 'DELETE', headers: { authorization: headers.authorization } });
    await client.end();
    receiver.closeAllConnections();
    receiver.close();
  }
}

/**
 * W3H's and W3Q's endpoint: a local receiver that answers 204 at once and one enabled endpoint of the company
 * subscribed to "*" pointing at it, so every create of the scenario enqueues a delivery and the server's
 * worker delivers it during the run (the write path and the delivery load together, as in production).
 * The teardown waits (up to 60 s) until the endpoint has no pending delivery left, deletes the endpoint
 * and answers what happened: deliveries written, received during the run, and the backlog drained after it.
 */
export async function withWebhookEndpoint(options: {
  url: string;
  databaseUrl: string;
  apiKey: string;
  companyId: string;
  log: (line: string) => void;
  /** Scenario id, for the log. */
  id: string;
  /** false: the server's worker is off; the teardown removes the pending deliveries instead of waiting for them. */
  delivering: boolean;
}): Promise<{ teardown(): Promise<string> }> {
  let received = 0;
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      response.writeHead(204).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const port = (receiver.address() as { port: number }).port;
  const headers = { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' };
  const created = await fetch(`${options.url}/api/v1/webhook_endpoints`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ url: `http://127.0.0.1:${port}/hooks`, events: ['*'], description: 'bench W3H' }),
  });
  const endpoint = ((await created.json()) as { data?: { uuid: string } }).data;
  if (!created.ok || !endpoint) {
    receiver.close();
    throw new Error(`${options.id}: creating the endpoint answered ${created.status}`);
  }
  options.log(`${options.id}: endpoint ${endpoint.uuid} subscribed to "*" -> http://127.0.0.1:${port}/hooks`);
  return {
    async teardown() {
      const receivedDuringRun = received;
      const client = new pg.Client({ connectionString: options.databaseUrl });
      await client.connect();
      try {
        const counts = async () =>
          (
            await client.query<{ total: number; pending: number }>(
              `select count(*)::int as total, (count(*) filter (where status = 'pending'))::int as pending
                 from webhook_deliveries where company_id = $1 and endpoint_uuid = $2`,
              [options.companyId, endpoint.uuid],
            )
          ).rows[0];
        const atEnd = await counts();
        if (!options.delivering) {
          // Nothing delivers them here; removed so no later run or server sends them.
          await client.query(`delete from webhook_deliveries where company_id = $1 and endpoint_uuid = $2 and status = 'pending'`, [
            options.companyId,
            endpoint.uuid,
          ]);
          const text = `${atEnd.total} deliveries written (warm-up included), none delivered (worker off), removed afterwards`;
          options.log(`${options.id}: ${text}`);
          return text;
        }
        const started = performance.now();
        let now = atEnd;
        while (now.pending > 0 && performance.now() - started < 60_000) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          now = await counts();
        }
        const drained = (performance.now() - started) / 1000;
        const text =
          `${atEnd.total} deliveries written (warm-up included), ${receivedDuringRun} received by the end of the run, ` +
          `${atEnd.pending} pending then; ` +
          (now.pending === 0 ? `backlog drained ${drained.toFixed(1)} s later` : `${now.pending} still pending after 60 s`);
        options.log(`${options.id}: ${text}`);
        return text;
      } finally {
        await client.end();
        await fetch(`${options.url}/api/v1/webhook_endpoints/${endpoint.uuid}`, {
          method: 'DELETE',
          headers: { authorization: headers.authorization },
        });
        receiver.closeAllConnections();
        receiver.close();
      }
    },
  };
}
