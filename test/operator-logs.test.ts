import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/client.js';
import { loggerOptions } from '../src/plugins/request-log.js';
import { createTestDatabase } from './helpers/app.js';
import { makeCompany, makeKey } from './helpers/factories.js';
import { makeJob, PNG_BYTES, uploadPhotos } from './helpers/jobs-factories.js';
import { call } from './helpers/app.js';

/** The app with the production logger options, its lines captured as parsed JSON. */
const lines: Array<Record<string, unknown>> = [];
const stream = new Writable({
  write(chunk, _encoding, callback) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    callback();
  },
});
const uploadDir = mkdtempSync(join(tmpdir(), 'crm-logs-'));
const { database, url, drop } = await createTestDatabase();
const env = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'info',
  RATE_LIMIT_PER_MINUTE: '0',
  AUTH_CACHE_TTL_MS: '0',
  DATA_DIR: 'memory://',
  UPLOAD_DIR: uploadDir,
  ...(url ? { DATABASE_URL: url } : {}),
};
const config = loadConfig(env);
const app = await buildApp({ config, database, logger: { ...loggerOptions(config), stream } });
await app.listen({ host: '127.0.0.1', port: 0 });
const port = (app.server.address() as AddressInfo).port;
afterAll(async () => {
  await app.close();
  await database.close();
  await drop();
  rmSync(uploadDir, { recursive: true, force: true });
});

const completed = (path: string) => lines.filter((line) => line.msg === 'request completed' && String(line.url).startsWith(path));

describe('request log lines', () => {
  it('use ISO timestamps and name the company and key prefix of an authenticated request', async () => {
    const company = await makeCompany(database);
    const key = await makeKey(database, company.companyId);
    const response = await call(app, 'GET', '/api/v1/companies/me', { key: key.api_key });
    expect(response.status).toBe(200);
    const [line] = completed('/api/v1/companies/me');
    expect(line).toMatchObject({ status: 200, company_uuid: company.companyId, key_prefix: key.key_prefix });
    expect(line.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(line).not.toHaveProperty('error_code');
    // The key itself never reaches the log.
    expect(JSON.stringify(lines)).not.toContain(key.api_key);
  });

  it('carry the error code of a refusal: 404, 401 and 403 ip_restricted', async () => {
    const company = await makeCompany(database);
    await call(app, 'GET', '/api/v1/customers/019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70', { key: company.key });
    expect(completed('/api/v1/customers/')[0]).toMatchObject({ status: 404, error_code: 'not_found', company_uuid: company.companyId });

    await call(app, 'GET', '/api/v1/users', { key: 'fsc_live_nope' });
    const unauthorized = completed('/api/v1/users')[0];
    expect(unauthorized).toMatchObject({ status: 401, error_code: 'unauthorized' });
    expect(unauthorized).not.toHaveProperty('company_uuid');

    const restricted = await makeKey(database, company.companyId, { allowedIps: ['203.0.113.7'] });
    await call(app, 'GET', '/api/v1/locations', { key: restricted.api_key });
    expect(completed('/api/v1/locations')[0]).toMatchObject({
      status: 403,
      error_code: 'ip_restricted',
      company_uuid: company.companyId,
      key_prefix: restricted.key_prefix,
    });
  });
});

describe('photo downloads', () => {
  it('are logged and counted once even when the client closes right after the last byte', async () => {
    const company = await makeCompany(database);
    const job = await makeJob(app, company.key);
    const uploaded = await uploadPhotos(app, company.key, job.uuid as string, [{ name: 'a.png', bytes: PNG_BYTES }]);
    expect(uploaded.status).toBe(200);
    const photoUrl = new URL(uploaded.body.data.photos[0].photo_url as string);
    const path = photoUrl.pathname + photoUrl.search;

    // A raw client that reads the headers and exactly content-length bytes, then drops the connection.
    const received = await new Promise<Buffer>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
      });
      let buffer = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        buffer = Buffer.concat([buffer, chunk]);
        const headerEnd = buffer.indexOf('\r\n\r\n');
        if (headerEnd === -1) return;
        const length = Number(/content-length: (\d+)/i.exec(buffer.subarray(0, headerEnd).toString())?.[1]);
        if (buffer.length - headerEnd - 4 >= length) {
          socket.destroy();
          resolve(buffer.subarray(headerEnd + 4));
        }
      });
      socket.on('error', reject);
    });
    expect(received.equals(PNG_BYTES)).toBe(true);

    await expect.poll(() => completed(photoUrl.pathname).length, { timeout: 5000 }).toBe(1);
    expect(completed(photoUrl.pathname)[0]).toMatchObject({ method: 'GET', status: 200 });
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    const counted = metrics.body
      .split('\n')
      .find((line) => line.startsWith('http_requests_total{') && line.includes('route="/files/*"') && line.includes('status_code="200"'));
    expect(counted, metrics.body.slice(0, 2000)).toMatch(/ 1$/);
  });
});

describe('a client that leaves before the answer', () => {
  it('is logged once as 499 and aborted, not as the 200 nothing sent, and counted as 499', async () => {
    const company = await makeCompany(database);
    // A body declared longer than what is sent: the request is still being read when the client goes.
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          `POST /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${company.key}\r\n` +
            `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"first_name":`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 100);
      });
      socket.on('error', reject);
    });

    const mine = () => completed('/api/v1/customers').filter((line) => line.company_uuid === company.companyId);
    await expect.poll(() => mine().length, { timeout: 5000 }).toBe(1);
    expect(mine()[0]).toMatchObject({ method: 'POST', status: 499, aborted: true, level: 30 });
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    const counted = metrics.body
      .split('\n')
      .find((line) => line.startsWith('http_requests_total{') && line.includes('route="/api/v1/customers"') && line.includes('status_code="499"'));
    expect(counted, metrics.body.slice(0, 2000)).toMatch(/ 1$/);
    expect(lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
  });
});

describe('a request cut for sending its body too slowly', () => {
  it('is logged once with the 400 written on its socket and its error code, not as 499', async () => {
    const timedConfig = loadConfig({ ...env, REQUEST_TIMEOUT_MS: '1000' });
    const timed = await buildApp({ config: timedConfig, database, logger: { ...loggerOptions(timedConfig), stream } });
    await timed.listen({ host: '127.0.0.1', port: 0 });
    const company = await makeCompany(database);
    const socket = connect((timed.server.address() as AddressInfo).port, '127.0.0.1');
    socket.on('error', () => undefined);
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.write(
      `POST /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${company.key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
    );
    const mine = () => completed('/api/v1/customers').filter((line) => line.company_uuid === company.companyId);
    await expect.poll(() => mine().length, { timeout: 10_000 }).toBe(1);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(mine()[0]).toMatchObject({ method: 'POST', status: 400, error_code: 'validation_error' });
    expect(mine()[0]).not.toHaveProperty('aborted');
    socket.destroy();
    await timed.close();
  });

  it.runIf(url)('log a failed query of a 5xx with its statement but without its parameters', async () => {
    const slowConfig = loadConfig({ ...env, STATEMENT_TIMEOUT_MS: '100' });
    const slowDatabase = await createDatabase(slowConfig);
    const slow = await buildApp({ config: slowConfig, database: slowDatabase, logger: { ...loggerOptions(slowConfig), stream } });
    // A value that looks like a stack frame after its first line must go too.
    const secret = `Jane Private ${Date.now()}\n    at Looks.like (a-frame.js:1:1) Private tail`;
    // A statement the timeout cuts, carrying a request value as its parameter.
    slow.get('/__slow-with-values', async () => {
      await slow.deps.database.db.execute(sql`select ${secret}::text as name, pg_sleep(1)`);
      return { done: true };
    });
    await slow.ready();
    try {
      const response = await slow.inject({ method: 'GET', url: '/__slow-with-values' });
      expect(response.statusCode).toBe(503);
      const failed = lines.filter((line) => line.msg === 'request failed' && JSON.stringify(line).includes('pg_sleep'));
      expect(failed).toHaveLength(1);
      const logged = JSON.stringify(failed[0]);
      expect(logged).toContain('params: [not logged]');
      expect(logged).not.toContain('Jane Private');
      expect(logged).not.toContain('Private tail');
    } finally {
      await slow.close();
      await slowDatabase.close();
    }
  });
});
