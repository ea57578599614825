import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';
import { fakeResolver, recordEvent, startReceiver, waitFor } from './helpers/webhooks.js';

const dnsAnswers: Record<string, string[]> = {};
const ctx = await buildTestApp({
  env: {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_DELAYS: '0.2,0.4',
    WEBHOOK_TIMEOUT_MS: '1500',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    WEBHOOK_LEASE_MARGIN_MS: '500',
  },
  resolveHost: fakeResolver(dnsAnswers),
});
const receivers: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
});

async function receiver(...args: Parameters<typeof startReceiver>) {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
}

async function endpoint(key: string, url: string, events: string[] = ['*']) {
  const response = await call(ctx.app, 'POST', '/api/v1/webhook_endpoints', { key, body: { url, events } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as { uuid: string; secret: string };
}

async function deliveriesOf(key: string, endpointUuid: string) {
  const response = await call(ctx.app, 'GET', `/api/v1/webhook_endpoints/${endpointUuid}/deliveries`, { key });
  expect(response.status).toBe(200);
  return response.body.data.deliveries as Array<Record<string, any>>;
}

const settled = (key: string, endpointUuid: string, status: string, attempts?: number) =>
  waitFor(async () => {
    const [delivery] = await deliveriesOf(key, endpointUuid);
    return delivery?.status === status && (attempts === undefined || delivery.attempts === attempts) ? delivery : undefined;
  }, 15_000, `a ${status} delivery`);

describe('webhook delivery', () => {
  it('POSTs the event JSON with Standard Webhooks headers that standardwebhooks verifies', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver();
    const created = await endpoint(key, `${target.url}/hooks?source=crm`);
    const before = Math.floor(Date.now() / 1000);
    const event = await recordEvent(ctx.database, companyId, 'invoice.updated');
    const delivery = await settled(key, created.uuid, 'succeeded');
    expect(delivery).toMatchObject({
      event_uuid: event.uuid,
      event_type: 'invoice.updated',
      attempts: 1,
      last_response_status: 200,
      last_response_body: 'ok',
      last_error: null,
      next_attempt_at: null,
    });
    expect(delivery.last_attempt_at).toEqual(expect.any(String));
    expect(target.received).toHaveLength(1);
    const [request] = target.received;
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toBe(event.uuid);
    const timestamp = Number(request.headers['webhook-timestamp']);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);

    const headers = {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    const payload = new Webhook(created.secret).verify(request.body, headers) as Record<string, unknown>;
    expect(payload).toEqual({
      uuid: event.uuid,
      type: 'invoice.updated',
      object_type: 'invoice',
      object_uuid: event.objectUuid,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      data: event.data,
    });
    expect(Object.keys(payload)).toEqual(['uuid', 'type', 'object_type', 'object_uuid', 'created_at', 'data']);
    // Another secret, or a changed body, does not verify.
    const otherSecret = (await endpoint(key, target.url)).secret;
    expect(() => new Webhook(otherSecret).verify(request.body, headers)).toThrow();
    expect(() => new Webhook(created.secret).verify(request.body.replace('invoice', 'invoicE'), headers)).toThrow();
  });

  it('delivers only subscribed types', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver();
    await endpoint(key, target.url, ['payment.created']);
    await recordEvent(ctx.database, companyId, 'customer.created');
    const payment = await recordEvent(ctx.database, companyId, 'payment.created');
    await waitFor(() => target.received.length === 1, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received.map((request) => request.headers['webhook-id'])).toEqual([payment.uuid]);
  });

  it('retries on the schedule with the same webhook-id, then succeeds', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver((_request, response, index) => {
      response.writeHead(index < 2 ? 500 : 204).end();
    });
    const created = await endpoint(key, target.url);
    const event = await recordEvent(ctx.database, companyId);
    const delivery = await settled(key, created.uuid, 'succeeded');
    expect(delivery).toMatchObject({ attempts: 3, last_response_status: 204, last_error: null, next_attempt_at: null });
    expect(target.received.map((request) => request.headers['webhook-id'])).toEqual([event.uuid, event.uuid, event.uuid]);
    const [first, second, third] = target.received.map((request) => request.at);
    expect(second - first).toBeGreaterThanOrEqual(180);
    expect(third - second).toBeGreaterThanOrEqual(380);
  });

  it('shows a pending delivery with its next attempt after a failed one', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver((_request, response, index) => {
      if (index === 0) response.writeHead(500).end();
      else setTimeout(() => response.writeHead(200).end(), 300);
    });
    const created = await endpoint(key, target.url);
    await recordEvent(ctx.database, companyId);
    const pending = await waitFor(async () => {
      const [delivery] = await deliveriesOf(key, created.uuid);
      return delivery?.last_response_status === 500 ? delivery : undefined;
    });
    expect(pending).toMatchObject({ status: 'pending', attempts: 1, last_error: 'The receiver answered HTTP 500.' });
    expect(pending.next_attempt_at).toEqual(expect.any(String));
    await settled(key, created.uuid, 'succeeded', 2);
  });

  it('fails after the last retry; retry schedules one more attempt', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver((_request, response) => {
      response.writeHead(503).end('down');
    });
    const created = await endpoint(key, target.url);
    await recordEvent(ctx.database, companyId);
    const failed = await settled(key, created.uuid, 'failed');
    expect(failed).toMatchObject({ attempts: 3, last_response_status: 503, next_attempt_at: null });
    expect(failed.last_error).toMatch(/503/);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(target.received).toHaveLength(3);

    const retried = await call(ctx.app, 'POST', `/api/v1/webhook_endpoints/${created.uuid}/deliveries/${failed.uuid}/retry`, { key });
    expect(retried.status).toBe(200);
    expect(retried.body.data.status).toBe('pending');
    await waitFor(() => target.received.length === 4, 5_000, 'the retried attempt');
    const again = await settled(key, created.uuid, 'failed', 4);
    expect(again.last_response_status).toBe(503);
  });

  it('does not follow redirects', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const elsewhere = await receiver();
    const target = await receiver((_request, response) => {
      response.writeHead(307, { location: `${elsewhere.url}/landing` }).end();
    });
    const created = await endpoint(key, target.url);
    await recordEvent(ctx.database, companyId);
    const failed = await settled(key, created.uuid, 'failed', 3);
    expect(failed.last_response_status).toBe(307);
    expect(failed.last_error).toMatch(/redirects are not followed/);
    expect(elsewhere.received).toHaveLength(0);
  });

  it('times out a hanging receiver without stalling the others', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const hanging = await receiver(() => undefined);
    const fast = await receiver();
    const slow = await endpoint(key, hanging.url);
    const quick = await endpoint(key, fast.url);
    for (let index = 0; index < 5; index++) await recordEvent(ctx.database, companyId);
    await waitFor(() => fast.received.length === 5 && hanging.received.length === 5, 5_000, 'both receivers');
    // Every fast delivery arrived while the hanging ones were still waiting for their timeout.
    const lastFast = Math.max(...fast.received.map((request) => request.at));
    const firstHanging = Math.min(...hanging.received.map((request) => request.at));
    expect(lastFast).toBeLessThan(firstHanging + 1_500);
    const timedOut = await waitFor(async () => {
      const deliveries = await deliveriesOf(key, slow.uuid);
      return deliveries.every((delivery) => delivery.last_error) ? deliveries : undefined;
    }, 10_000, 'timeouts');
    for (const delivery of timedOut) {
      expect(delivery.last_error).toBe('No answer within 1500 ms.');
      expect(delivery.last_response_status).toBeNull();
    }
    expect((await deliveriesOf(key, quick.uuid)).every((delivery) => delivery.status === 'succeeded')).toBe(true);
    await call(ctx.app, 'DELETE', `/api/v1/webhook_endpoints/${slow.uuid}`, { key });
  });

  it('reuses the connection to a receiver for the following deliveries', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver();
    await endpoint(key, `${target.url}/in`, ['customer.created']);
    for (let sent = 1; sent <= 5; sent++) {
      await recordEvent(ctx.database, companyId, 'customer.created');
      await waitFor(() => target.received.length === sent, 5_000, `delivery ${sent}`);
    }
    expect(target.connections.count).toBe(1);
  });

  it('sends again on a new connection when a kept one was closed by the receiver as it was reused', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    // Answers the first request of each connection and drops the connection at the second, unanswered.
    const served = new WeakSet<object>();
    const target = await receiver((_request, response) => {
      const socket = response.socket!;
      if (served.has(socket)) {
        socket.destroy();
        return;
      }
      served.add(socket);
      response.writeHead(200).end('ok');
    });
    const created = await endpoint(key, `${target.url}/in`, ['customer.created']);
    await recordEvent(ctx.database, companyId, 'customer.created');
    await waitFor(() => target.received.length === 1, 5_000, 'the first delivery');
    await recordEvent(ctx.database, companyId, 'customer.created');
    await waitFor(async () => {
      const deliveries = await deliveriesOf(key, created.uuid);
      return deliveries.length === 2 && deliveries.every((delivery) => delivery.status === 'succeeded');
    }, 5_000, 'both deliveries succeeded');
    const deliveries = await deliveriesOf(key, created.uuid);
    // The drop cost no failed attempt: the second delivery went through on a new connection at once.
    expect(deliveries.map((delivery) => delivery.attempts)).toEqual([1, 1]);
    expect(target.received).toHaveLength(3);
    expect(target.connections.count).toBe(2);
  });

  it('records a refused connection as a failed attempt', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver();
    await target.close();
    const created = await endpoint(key, target.url);
    await recordEvent(ctx.database, companyId);
    const failed = await settled(key, created.uuid, 'failed', 3);
    expect(failed.last_error).toMatch(/ECONNREFUSED/);
  });

  it('connects to the checked address with the original Host, and re-checks the address at every attempt', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver();
    dnsAnswers['hooks.test'] = ['127.0.0.1'];
    const created = await endpoint(key, `http://hooks.test:${target.port}/in`);
    await recordEvent(ctx.database, companyId);
    await settled(key, created.uuid, 'succeeded');
    expect(target.received[0].headers.host).toBe(`hooks.test:${target.port}`);

    // The name now resolves to a link-local address (DNS rebinding): nothing is sent.
    dnsAnswers['hooks.test'] = ['169.254.169.254'];
    await recordEvent(ctx.database, companyId);
    const refused = await waitFor(async () => {
      const deliveries = await deliveriesOf(key, created.uuid);
      return deliveries.find((delivery) => delivery.last_error);
    });
    expect(refused.last_error).toBe('Address refused: host hooks.test does not resolve to public addresses only.');
    expect(refused.last_response_status).toBeNull();
    expect(target.received).toHaveLength(1);
    await call(ctx.app, 'DELETE', `/api/v1/webhook_endpoints/${created.uuid}`, { key });
  });

  it('reaches a receiver listening on 127.0.0.1 alone when its name resolves to ::1 first', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver();
    dnsAnswers['dual.test'] = ['::1', '127.0.0.1'];
    const created = await endpoint(key, `http://dual.test:${target.port}/in`);
    await recordEvent(ctx.database, companyId);
    await settled(key, created.uuid, 'succeeded');
    expect(target.received).toHaveLength(1);
    await call(ctx.app, 'DELETE', `/api/v1/webhook_endpoints/${created.uuid}`, { key });
  });

  it('accepts a name that does not resolve yet; its attempts fail until it does, then a retry delivers', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver();
    const created = await endpoint(key, `http://later.test:${target.port}/in`);
    await recordEvent(ctx.database, companyId);
    const failed = await waitFor(async () => (await deliveriesOf(key, created.uuid)).find((delivery) => delivery.last_error));
    expect(failed.last_error).toBe('Address refused: host later.test does not resolve to public addresses only.');
    expect(failed.status).toBe('pending');
    expect(target.received).toHaveLength(0);

    dnsAnswers['later.test'] = ['127.0.0.1'];
    const retried = await call(ctx.app, 'POST', `/api/v1/webhook_endpoints/${created.uuid}/deliveries/${failed.uuid}/retry`, { key });
    expect(retried.status).toBe(200);
    await settled(key, created.uuid, 'succeeded');
    expect(target.received).toHaveLength(1);
    await call(ctx.app, 'DELETE', `/api/v1/webhook_endpoints/${created.uuid}`, { key });
  });

  it('does not attempt a delivery of a disabled endpoint retried by hand', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const target = await receiver((_request, response) => {
      response.writeHead(500).end();
    });
    const created = await endpoint(key, target.url);
    await recordEvent(ctx.database, companyId);
    await waitFor(() => target.received.length === 1);
    await call(ctx.app, 'PATCH', `/api/v1/webhook_endpoints/${created.uuid}`, { key, body: { enabled: false } });
    const [failed] = await deliveriesOf(key, created.uuid);
    expect(failed).toMatchObject({ status: 'failed', last_error: 'The endpoint was disabled.' });
    await call(ctx.app, 'POST', `/api/v1/webhook_endpoints/${created.uuid}/deliveries/${failed.uuid}/retry`, { key });
    await waitFor(async () => (await deliveriesOf(key, created.uuid))[0].status === 'failed');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(target.received).toHaveLength(1);
  });
});

describe("a receiver's answer is read within bounds (DECISIONS §11)", () => {
  /** What a receiver sent on one answer, and when the client closed the connection. */
  interface Stream {
    started: number;
    written: number;
    closed?: number;
  }

  it('an endless answer: at most 64 KiB read, the connection closed, the first 1 KiB logged; the status decides', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const streams: Stream[] = [];
    const head = `BEGIN-${'0123456789'.repeat(200)}`;
    const target = await receiver((_request, response, index) => {
      const stream: Stream = { started: Date.now(), written: 0 };
      streams.push(stream);
      response.on('close', () => (stream.closed = Date.now()));
      // 500 first, then 200: the status alone decides each attempt.
      response.writeHead(index === 0 ? 500 : 200, { 'content-type': 'text/plain' });
      response.write(head);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!response.destroyed && stream.written < 512 * 1024 * 1024) {
          stream.written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
      };
      pump();
    });
    const created = await endpoint(key, target.url);
    await recordEvent(ctx.database, companyId);
    const delivery = await settled(key, created.uuid, 'succeeded', 2);
    expect(delivery.last_response_status).toBe(200);
    expect(delivery.last_response_body).toBe(head.slice(0, 1024));
    expect(streams).toHaveLength(2);
    // The receiver hears of the last close a moment after the delivery is recorded.
    await waitFor(() => streams.every((stream) => stream.closed !== undefined) || undefined, 2_000, 'both answers closed');
    for (const stream of streams) {
      // Closed by the client long before its timeout (1.5 s), after a bounded amount (kernel buffers included).
      expect(stream.closed, 'the connection was closed').toBeDefined();
      expect(stream.closed! - stream.started).toBeLessThan(1_000);
      expect(stream.written).toBeLessThan(32 * 1024 * 1024);
    }
  });

  it('a trickling answer: cut at WEBHOOK_TIMEOUT_MS from the start of the attempt; the status decides', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const streams: Stream[] = [];
    const target = await receiver((_request, response, index) => {
      const stream: Stream = { started: Date.now(), written: 0 };
      streams.push(stream);
      // 200 first (succeeds), then the same endpoint gets a trickling 500 for a second event (fails).
      response.writeHead(index === 0 ? 200 : 500, { 'content-type': 'text/plain' });
      const timer = setInterval(() => {
        response.write('.');
        stream.written++;
      }, 100);
      response.on('close', () => {
        clearInterval(timer);
        stream.closed = Date.now();
      });
    });
    const created = await endpoint(key, target.url);
    await recordEvent(ctx.database, companyId);
    const succeeded = await settled(key, created.uuid, 'succeeded', 1);
    expect(succeeded.last_response_status).toBe(200);
    expect(succeeded.last_response_body).toMatch(/^\.+$/);
    expect(streams[0].closed, 'the connection was closed').toBeDefined();
    // WEBHOOK_TIMEOUT_MS is 1.5 s from the start of the attempt (its address check and connect included).
    expect(streams[0].closed! - streams[0].started).toBeGreaterThanOrEqual(1_000);
    expect(streams[0].closed! - streams[0].started).toBeLessThan(2_500);

    await recordEvent(ctx.database, companyId);
    const failed = await waitFor(async () => {
      const deliveries = await deliveriesOf(key, created.uuid);
      return deliveries.find((delivery) => delivery.last_response_status === 500);
    }, 10_000, 'the trickling 500 recorded');
    expect(failed).toMatchObject({ status: 'pending', attempts: 1, last_error: 'The receiver answered HTTP 500.' });
    expect(streams[1].closed! - streams[1].started).toBeLessThan(2_500);
  });
});

describe('webhook delivery on the embedded PGlite database', () => {
  it('claims, delivers and records like on PostgreSQL', async () => {
    const { buildApp } = await import('../src/app.js');
    const { loadConfig } = await import('../src/config.js');
    const { createDatabase } = await import('../src/db/client.js');
    const { migrateDatabase } = await import('../src/db/migrate.js');
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATA_DIR: 'memory://',
      RATE_LIMIT_PER_MINUTE: '0',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_DELAYS: '0.1',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    });
    const database = await createDatabase(config);
    await migrateDatabase(database);
    const app = await buildApp({ config, database });
    await app.ready();
    try {
      expect(database.driver).toBe('pglite');
      const { key, companyId } = await makeCompany(database);
      const target = await receiver((_request, response, index) => {
        response.writeHead(index === 0 ? 500 : 200).end();
      });
      const response = await call(app, 'POST', '/api/v1/webhook_endpoints', { key, body: { url: target.url, events: ['*'] } });
      expect(response.status).toBe(200);
      const event = await recordEvent(database, companyId);
      const delivered = await waitFor(async () => {
        const listed = await call(app, 'GET', `/api/v1/webhook_endpoints/${response.body.data.uuid}/deliveries`, { key });
        const [delivery] = listed.body.data.deliveries;
        return delivery?.status === 'succeeded' ? delivery : undefined;
      });
      expect(delivered.attempts).toBe(2);
      const verified = new Webhook(response.body.data.secret).verify(target.received[1].body, {
        'webhook-id': String(target.received[1].headers['webhook-id']),
        'webhook-timestamp': String(target.received[1].headers['webhook-timestamp']),
        'webhook-signature': String(target.received[1].headers['webhook-signature']),
      });
      expect(verified).toMatchObject({ uuid: event.uuid });
    } finally {
      await app.close();
      await database.close();
    }
    // An embedded database of its own: creating and migrating it takes most of this time on a loaded machine.
  }, 60_000);
});

describe('the endpoint secret in logs', () => {
  it('is never written to the log, at any level, through create, delivery and failure', async () => {
    const { Writable } = await import('node:stream');
    const { buildApp } = await import('../src/app.js');
    const { loadConfig } = await import('../src/config.js');
    const { createTestDatabase } = await import('./helpers/app.js');
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const testDb = await createTestDatabase();
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: 'memory://',
      RATE_LIMIT_PER_MINUTE: '0',
      ...(testDb.url ? { DATABASE_URL: testDb.url } : {}),
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_DELAYS: '0.1',
      WEBHOOK_POLL_INTERVAL_MS: '50',
    });
    const app = await buildApp({ config, database: testDb.database, logger: { level: 'trace', stream } });
    await app.ready();
    try {
      const { key, companyId } = await makeCompany(testDb.database);
      const target = await receiver((_request, response) => {
        response.writeHead(500).end();
      });
      const response = await call(app, 'POST', '/api/v1/webhook_endpoints', { key, body: { url: target.url, events: ['*'] } });
      const { secret, uuid } = response.body.data;
      await recordEvent(testDb.database, companyId);
      await waitFor(async () => {
        const listed = await call(app, 'GET', `/api/v1/webhook_endpoints/${uuid}/deliveries`, { key });
        return listed.body.data.deliveries[0]?.status === 'failed';
      });
      expect(lines.length).toBeGreaterThan(0);
      const log = lines.join('');
      expect(log).not.toContain(secret);
      expect(log).not.toContain(secret.slice('whsec_'.length));
    } finally {
      await app.close();
      await testDb.database.close();
      await testDb.drop();
    }
  });
});
