/**
 * The balancer's own behaviour, with deploy/haproxy.cfg as the cluster renders it, in front of stand-in
 * instances whose answers each test chooses: HAProxy's answers are in the envelope with an x-request-id, the
 * request id reaches the instances, a database outage on every instance at once does not take them out of
 * the pool, and they get traffic again the moment they can serve it. Runs wherever haproxy is installed
 * (always in CI); the real instances behind it are tested in cluster.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findProgram, freePort, haproxyConfig } from '../scripts/local-cluster.js';
import { inCi } from './helpers/system.js';
import { CLIENT_REQUEST_ID } from '../src/app.js';

const haproxyBinary = findProgram('haproxy');
if (!haproxyBinary && !inCi) process.stdout.write('test/haproxy.test.ts skipped: haproxy is not installed (apt-get install haproxy)\n');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A stand-in API instance: /healthz, /readyz and everything else answer as the test sets them. */
class FakeInstance {
  ready = true;
  /** What a request other than the probes gets. */
  handler: Handler = (_request, response) => envelope(response, 200, { success: true, data: { ok: true } });
  readonly seen: IncomingMessage[] = [];
  private constructor(
    readonly name: string,
    private server: Server,
    readonly port: number,
  ) {}

  static async start(name: string): Promise<FakeInstance> {
    let instance: FakeInstance | undefined;
    const server = createServer((request, response) => instance!.answer(request, response));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    instance = new FakeInstance(name, server, (server.address() as { port: number }).port);
    return instance;
  }

  private answer(request: IncomingMessage, response: ServerResponse) {
    response.setHeader('x-instance', this.name);
    if (request.url === '/healthz') return envelope(response, 200, { success: true, data: { status: 'ok' } });
    if (request.url === '/readyz') {
      if (this.ready) return envelope(response, 200, { success: true, data: { status: 'ready' } });
      return envelope(response, 503, { success: false, error: { code: 'service_unavailable', message: 'The database is unavailable.' } });
    }
    this.seen.push(request);
    this.handler(request, response);
  }

  async close() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

function envelope(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify(body));
}

const databaseDown: Handler = (request, response) =>
  envelope(response, 503, {
    success: false,
    error: { code: 'service_unavailable', message: 'The database is unavailable.', request_id: request.headers['x-request-id'] },
  });

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: any;
}

/**
 * One request on a connection of its own: HAProxy answers 502 only to the first request of a connection; on a
 * later one it closes the connection instead, as a server that closes an idle keep-alive connection would.
 */
function get(base: string, urlPath = '/api/v1/things', headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}${urlPath}`, { agent: false, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

/** An answer HAProxy made itself: the envelope, JSON, with the request id in header and body alike. */
function expectProxyEnvelope(answer: Answer, status: number, code = 'service_unavailable') {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json');
  expect(answer.headers['x-instance']).toBeUndefined();
  expect(answer.body).toMatchObject({ success: false, error: { code, message: expect.any(String) } });
  expect(answer.body.error.request_id).toBe(answer.headers['x-request-id']);
  expect(answer.text).not.toMatch(/<html/i);
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.runIf(haproxyBinary || inCi)('HAProxy (deploy/haproxy.cfg) in front of stand-in instances', () => {
  const instances: FakeInstance[] = [];
  let haproxy: ChildProcess;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    if (!haproxyBinary) throw new Error('haproxy is not installed (apt-get install haproxy); CI runs this test');
    for (const name of ['api1', 'api2', 'api3']) instances.push(await FakeInstance.start(name));
    const port = await freePort();
    dir = mkdtempSync(path.join(os.tmpdir(), 'crm-haproxy-'));
    const cfg = path.join(dir, 'haproxy.cfg');
    // The deployed configuration; only a slow instance is given up on sooner, so the test need not wait a minute.
    const config = haproxyConfig(port, instances).replace(/timeout server 60s/, 'timeout server 1500ms');
    expect(config).toContain('timeout server 1500ms');
    writeFileSync(cfg, config);
    haproxy = spawn(haproxyBinary, ['-db', '-f', cfg], { stdio: 'ignore' });
    base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await get(base).catch(() => null))?.status === 200, 10_000);
  });

  afterAll(async () => {
    if (haproxy && haproxy.exitCode === null) {
      const exited = once(haproxy, 'exit');
      haproxy.kill('SIGTERM');
      await exited;
    }
    for (const instance of instances) await instance.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('gives every request an id: the client\'s when the instances keep it too, else a new one, to the instance and back', async () => {
    /** The x-request-id the one instance (a stub) that took the request saw. */
    const idsOf = async (headers: Record<string, string>) => {
      for (const instance of instances) instance.seen.length = 0;
      const answer = await get(base, '/api/v1/things', headers);
      expect(answer.status).toBe(200);
      const seen = instances.flatMap((instance) => instance.seen);
      expect(seen).toHaveLength(1);
      return seen[0].headers['x-request-id'];
    };
    for (const kept of ['client-id.1:2', 'has space', 'abc/123+4=', 'x'.repeat(255)]) {
      expect(CLIENT_REQUEST_ID.test(kept)).toBe(true);
      expect(await idsOf({ 'x-request-id': kept })).toBe(kept);
    }
    for (const insane of ['x'.repeat(256), '"quoted"', 'back\\slash']) {
      expect(CLIENT_REQUEST_ID.test(insane)).toBe(false);
      expect(await idsOf({ 'x-request-id': insane })).toMatch(UUID);
    }
    expect(await idsOf({})).toMatch(UUID);
  });

  it('answers 502 in the envelope when an instance closes the connection without answering', async () => {
    for (const instance of instances) instance.handler = (request) => request.socket.destroy();
    try {
      const answer = await get(base, '/api/v1/things', { 'x-request-id': 'cut-1' });
      expectProxyEnvelope(answer, 502);
      expect(answer.headers['x-request-id']).toBe('cut-1');
      expect(answer.body.error.message).toMatch(/Idempotency-Key/);
    } finally {
      for (const instance of instances) instance.handler = (_request, response) => envelope(response, 200, { success: true, data: {} });
    }
  });

  it('answers 504 in the envelope when an instance does not answer in time', async () => {
    for (const instance of instances) instance.handler = () => undefined;
    try {
      const answer = await get(base);
      expectProxyEnvelope(answer, 504);
      expect(answer.headers['x-request-id']).toMatch(UUID);
    } finally {
      for (const instance of instances) instance.handler = (_request, response) => envelope(response, 200, { success: true, data: {} });
    }
  });

  it('keeps every instance in the pool while the shared database is away, and serves at once when it is back', async () => {
    for (const instance of instances) {
      instance.ready = false;
      instance.handler = databaseDown;
    }
    // Longer than three failed checks a second: every instance is out of the ready pool.
    const outageEnds = Date.now() + 4_000;
    const answers: Answer[] = [];
    while (Date.now() < outageEnds) {
      answers.push(await get(base));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Every answer is the instances' own 503 (their envelope, their request id), none HAProxy's.
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.headers['x-instance']).toMatch(/^api\d$/);
      expect(answer.body.error).toMatchObject({ code: 'service_unavailable', message: 'The database is unavailable.' });
    }
    const spread = new Set(answers.slice(-9).map((answer) => answer.headers['x-instance']));
    expect(spread.size).toBe(3);

    // The database is back: the first request after it is served, with no wait for the checks.
    const back = Date.now();
    for (const instance of instances) {
      instance.ready = true;
      instance.handler = (_request, response) => envelope(response, 200, { success: true, data: {} });
    }
    const first = await get(base);
    expect(first.status).toBe(200);
    expect(Date.now() - back).toBeLessThan(500);
    // And the ready pool fills again: each instance is checked every 250 ms and is back after two checks.
    await waitFor(async () => {
      const after = await Promise.all(Array.from({ length: 6 }, () => get(base)));
      return new Set(after.map((answer) => answer.headers['x-instance'])).size === 3;
    }, 1_500);
  });

  it('leaves out an instance that is not ready while the others are', async () => {
    instances[0].ready = false;
    try {
      await waitFor(async () => {
        const answers = await Promise.all(Array.from({ length: 6 }, () => get(base)));
        return answers.every((answer) => answer.headers['x-instance'] !== 'api1');
      }, 5_000);
    } finally {
      instances[0].ready = true;
    }
  });

  it('answers 503 in the envelope when no instance is up at all', async () => {
    for (const instance of instances) await instance.close();
    await waitFor(async () => (await get(base)).headers['x-instance'] === undefined, 5_000);
    const answer = await get(base, '/api/v1/things', { 'x-request-id': 'nobody-home' });
    expectProxyEnvelope(answer, 503);
    expect(answer.headers['x-request-id']).toBe('nobody-home');
    expect(answer.headers['retry-after']).toBe('1');
    expect(answer.body.error.message).toMatch(/not carried out/);
    expectProxyEnvelope(await get(base), 503);
  });

  it('closes the connection on a request it cannot parse, without HTML', async () => {
    const socket = connect(Number(new URL(base).port), '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString();
    });
    socket.write('GET /api/v1/things HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n');
    await once(socket, 'close');
    expect(received).toBe('');
  });
});
