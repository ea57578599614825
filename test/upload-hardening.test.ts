import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';
import { JPEG_BYTES, makeJob, PNG_BYTES } from './helpers/jobs-factories.js';

/**
 * Uploads cut, malformed or stalled: each settles within seconds as a 400 in the envelope (never a 500,
 * never a request that hangs) and stores nothing.
 */
const UPLOAD_TIMEOUT_MS = 1500;
const uploadRoot = mkdtempSync(path.join(tmpdir(), 'upload-hardening-'));
const ctx = await buildTestApp({ env: { UPLOAD_DIR: uploadRoot, UPLOAD_TIMEOUT_MS: String(UPLOAD_TIMEOUT_MS) } });
await ctx.app.listen({ host: '127.0.0.1', port: 0 });
const port = (ctx.app.server.address() as { port: number }).port;
const sockets = new Set<Socket>();
afterAll(() => {
  for (const socket of sockets) socket.destroy();
});

function allFiles(dir = uploadRoot): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? allFiles(full) : [path.relative(uploadRoot, full)];
  });
}

async function setup() {
  const company = await makeCompany(ctx.database);
  const job = await makeJob(ctx.app, company.key);
  return { key: company.key, companyId: company.companyId, job };
}

function filePart(boundary: string, bytes: Buffer, name = 'photos') {
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
    bytes,
  ]);
}

function wholeForm(boundary: string, bytes: Buffer) {
  return Buffer.concat([filePart(boundary, bytes), Buffer.from(`\r\n--${boundary}--\r\n`)]);
}

async function inject(key: string, jobUuid: string, payload: Buffer, contentType: string, headers: Record<string, string> = {}) {
  const started = Date.now();
  const response = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/jobs/${jobUuid}/photos`,
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType, ...headers },
    payload,
  });
  return { status: response.statusCode, body: response.json(), ms: Date.now() - started, headers: response.headers };
}

async function photoCount(key: string, jobUuid: string): Promise<number> {
  const list = await call(ctx.app, 'GET', `/api/v1/jobs/${jobUuid}/photos?include_deleted=true`, { key });
  return list.body.data.pagination.total;
}

function expectRefused(response: { status: number; body: any }) {
  expect(response.status, JSON.stringify(response.body)).toBe(400);
  expect(response.body).toMatchObject({ success: false, error: { code: 'validation_error', message: expect.any(String) } });
}

describe('truncated and malformed multipart', () => {
  it('answers a small file cut before the closing boundary with 400 within seconds', async () => {
    const { key, companyId, job } = await setup();
    const response = await inject(key, job.uuid, filePart('cut', PNG_BYTES), 'multipart/form-data; boundary=cut');
    expectRefused(response);
    expect(response.ms).toBeLessThan(UPLOAD_TIMEOUT_MS);
    expect(await photoCount(key, job.uuid)).toBe(0);
    expect(allFiles().filter((file) => file.startsWith(companyId))).toEqual([]);
  });

  it('answers a larger file cut before the closing boundary with 400', async () => {
    const { key, job } = await setup();
    const big = Buffer.concat([JPEG_BYTES, Buffer.alloc(50_000, 7)]);
    expectRefused(await inject(key, job.uuid, filePart('cut', big), 'multipart/form-data; boundary=cut'));
    expect(await photoCount(key, job.uuid)).toBe(0);
  });

  it('answers multipart without a boundary with 400', async () => {
    const { key, job } = await setup();
    expectRefused(await inject(key, job.uuid, wholeForm('x', PNG_BYTES), 'multipart/form-data'));
  });

  it('answers a body with another boundary than the declared one with 400', async () => {
    const { key, job } = await setup();
    expectRefused(await inject(key, job.uuid, wholeForm('real', PNG_BYTES), 'multipart/form-data; boundary=declared'));
    expect(await photoCount(key, job.uuid)).toBe(0);
  });

  it('answers a part with a malformed header block with 400', async () => {
    const { key, job } = await setup();
    const payload = Buffer.from('--b\r\nthis is not a header\r\n\r\nxx\r\n--b--\r\n');
    expectRefused(await inject(key, job.uuid, payload, 'multipart/form-data; boundary=b'));
  });

  it('answers an empty multipart body with 400', async () => {
    const { key, job } = await setup();
    expectRefused(await inject(key, job.uuid, Buffer.alloc(0), 'multipart/form-data; boundary=b'));
  });
});

describe('upload deadline', () => {
  function open(): Promise<Socket> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(socket));
      sockets.add(socket);
    });
  }

  it('answers a client that stalls inside a small file with 400 at UPLOAD_TIMEOUT_MS and stores nothing', async () => {
    const { key, companyId, job } = await setup();
    const socket = await open();
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    const part = filePart('stall', PNG_BYTES);
    const started = Date.now();
    socket.write(
      `POST /api/v1/jobs/${job.uuid}/photos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: multipart/form-data; boundary=stall\r\nContent-Length: ${part.length + 1000}\r\n\r\n`,
    );
    socket.write(part);
    await closed;
    const elapsed = Date.now() - started;
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"validation_error"');
    expect(answer).toMatch(/x-request-id: /i);
    expect(elapsed).toBeGreaterThanOrEqual(UPLOAD_TIMEOUT_MS - 100);
    expect(elapsed).toBeLessThan(UPLOAD_TIMEOUT_MS + 3000);
    expect(await photoCount(key, job.uuid)).toBe(0);
    expect(allFiles().filter((file) => file.startsWith(companyId))).toEqual([]);
  });
});

describe('Idempotency-Key on uploads', () => {
  const pngOfSameSize = Buffer.from(PNG_BYTES);
  pngOfSameSize[pngOfSameSize.length - 20] ^= 0xff;

  it('replays a retry of the same file and refuses a different file of the same size under that key', async () => {
    const { key, companyId, job } = await setup();
    const headers = { 'idempotency-key': `upload-${job.uuid}` };
    const type = 'multipart/form-data; boundary=idem';
    const first = await inject(key, job.uuid, wholeForm('idem', PNG_BYTES), type, headers);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.photos).toHaveLength(1);

    const retry = await inject(key, job.uuid, wholeForm('idem', PNG_BYTES), type, headers);
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);

    expect(pngOfSameSize.length).toBe(PNG_BYTES.length);
    const other = await inject(key, job.uuid, wholeForm('idem', pngOfSameSize), type, headers);
    expect(other.status, JSON.stringify(other.body)).toBe(409);
    expect(other.body.error.code).toBe('conflict');
    expect(other.body.error.details).toEqual([{ field: 'Idempotency-Key', code: 'invalid', message: 'was used with a different request' }]);

    expect(await photoCount(key, job.uuid)).toBe(1);
    // Only the first upload's file is kept; the retry's and the refused one's staged files are gone.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(allFiles().filter((file) => file.startsWith(companyId))).toHaveLength(1);
  });

  it('refuses a JSON body of the same length but other bytes under one key', async () => {
    const { key } = await setup();
    const headers = { 'idempotency-key': `json-${Date.now()}` };
    const first = await call(ctx.app, 'POST', '/api/v1/customers', { key, headers, rawBody: '{"first_name":"Ann","last_name":"Lee"}' });
    expect(first.status).toBe(200);
    const other = await call(ctx.app, 'POST', '/api/v1/customers', { key, headers, rawBody: '{"first_name":"Bob","last_name":"Lee"}' });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('conflict');
    const same = await call(ctx.app, 'POST', '/api/v1/customers', { key, headers, rawBody: '{"first_name":"Ann","last_name":"Lee"}' });
    expect(same.status).toBe(200);
    expect(same.headers['idempotent-replayed']).toBe('true');
    expect(same.body.data.uuid).toBe(first.body.data.uuid);
  });
});
