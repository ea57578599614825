import { existsSync, mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createStorage } from '../src/storage/create-storage.js';
import type { LocalStorage } from '../src/storage/local-storage.js';
import { buildApp } from '../src/app.js';
import { buildTestApp, call, testConfig } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';
import { makeJob, PNG_BYTES, JPEG_BYTES } from './helpers/jobs-factories.js';

/**
 * Hostile uploads: each is refused with a clean 4xx in the envelope, stores nothing and keeps memory
 * bounded. What test/job-photos.test.ts already covers (a text file named .jpg, an empty file, a bad
 * photo_type, unknown fields, a file over a tiny limit next to a good one, more files than a tiny
 * limit, a ../ name with JPEG bytes) is not repeated here.
 */
const MAX_PHOTO_BYTES = 64 * 1024;
const uploadRoot = mkdtempSync(path.join(tmpdir(), 'upload-abuse-'));
const ctx = await buildTestApp({ env: { UPLOAD_DIR: uploadRoot, MAX_PHOTO_BYTES: String(MAX_PHOTO_BYTES) } });
await ctx.app.listen({ host: '127.0.0.1', port: 0 });
const port = (ctx.app.server.address() as { port: number }).port;
const openSockets = new Set<Socket>();
afterAll(() => {
  for (const socket of openSockets) socket.destroy();
});

/** Every file under the upload root, relative to it (temporary `.partial` files included). */
function allFiles(dir = uploadRoot): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? allFiles(full) : [path.relative(uploadRoot, full)];
  });
}

function filesOfJob(companyId: string, jobUuid: string): string[] {
  return allFiles().filter((file) => file.startsWith(path.join(companyId, jobUuid)));
}

async function setup() {
  const company = await makeCompany(ctx.database);
  const job = await makeJob(ctx.app, company.key);
  return { company, key: company.key, job };
}

interface RawPart {
  name: string;
  filename?: string;
  type?: string;
  body: Buffer | string;
  extraHeaders?: string[];
}

/** A multipart body written byte by byte, so names and headers are exactly what an attacker sends. */
function rawMultipart(parts: RawPart[], boundary = `abuse${Math.random().toString(16).slice(2)}`) {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let disposition = `form-data; name="${part.name}"`;
    if (part.filename !== undefined) disposition += `; filename="${part.filename}"`;
    const headers = [`Content-Disposition: ${disposition}`, ...(part.type ? [`Content-Type: ${part.type}`] : []), ...(part.extraHeaders ?? [])];
    chunks.push(Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`, 'utf8'), Buffer.from(part.body), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}`, boundary };
}

async function post(key: string, jobUuid: string, parts: RawPart[]) {
  const { payload, contentType } = rawMultipart(parts);
  const response = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/jobs/${jobUuid}/photos`,
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    payload,
  });
  return { status: response.statusCode, body: response.json() };
}

async function photoCount(key: string, jobUuid: string): Promise<number> {
  const list = await call(ctx.app, 'GET', `/api/v1/jobs/${jobUuid}/photos?include_deleted=true`, { key });
  expect(list.status).toBe(200);
  return list.body.data.pagination.total;
}

async function expectNothingStored(setupResult: Awaited<ReturnType<typeof setup>>) {
  const { company, key, job } = setupResult;
  expect(filesOfJob(company.companyId, job.uuid)).toEqual([]);
  expect(await photoCount(key, job.uuid)).toBe(0);
}

function expectRefused(response: { status: number; body: any }, status = 400, code = 'validation_error') {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toMatchObject({ success: false, error: { code, message: expect.any(String) } });
}

const png = (name = 'photo.png', type = 'image/png'): RawPart => ({ name: 'photos', filename: name, type, body: PNG_BYTES });

/** A PNG of exactly `size` bytes: the real header, then padding file-type does not look at. */
function pngOfSize(size: number): Buffer {
  return Buffer.concat([PNG_BYTES, Buffer.alloc(size - PNG_BYTES.length, 0x41)]);
}

describe('files lying about their type', () => {
  it('stores a PNG named .jpg and declared image/jpeg as a PNG', async () => {
    const { company, key, job } = await setup();
    const response = await post(key, job.uuid, [png('holiday.jpg', 'image/jpeg')]);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const photo = response.body.data.photos[0];
    expect(new URL(photo.photo_url).pathname).toBe(`/files/${company.companyId}/${job.uuid}/${photo.uuid}.png`);
    const record = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos/${photo.uuid}`, { key });
    expect(record.body.data).toMatchObject({ file_name: 'holiday.jpg', mime_type: 'image/png', file_size: PNG_BYTES.length });
    expect(filesOfJob(company.companyId, job.uuid)).toEqual([path.join(company.companyId, job.uuid, `${photo.uuid}.png`)]);
    const served = await ctx.app.inject({ method: 'GET', url: new URL(photo.photo_url).pathname + new URL(photo.photo_url).search });
    expect(served.headers['content-type']).toBe('image/png');
  });

  const ELF = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]), Buffer.alloc(120)]);
  const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
  const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>');
  const HTML = Buffer.from('<!doctype html><html><body><script>alert(1)</script></body></html>');
  const ZIP = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00]), Buffer.alloc(100)]);
  const SHELL = Buffer.from('#!/bin/sh\nrm -rf /\n');
  it.each([
    ['an ELF binary named .jpg', 'evil.jpg', 'image/jpeg', ELF],
    ['a PDF named .jpg', 'scan.jpg', 'image/jpeg', PDF],
    ['an SVG with a script declared image/png', 'logo.png', 'image/png', SVG],
    ['an HTML page named .gif', 'x.gif', 'image/gif', HTML],
    ['a ZIP named .heic', 'x.heic', 'image/heic', ZIP],
    ['a shell script declared image/webp', 'x.webp', 'image/webp', SHELL],
    ['a PNG signature cut short', 'short.png', 'image/png', PNG_BYTES.subarray(0, 4)],
  ])('refuses %s with 400 and stores nothing', async (_label, filename, type, body) => {
    const ctxJob = await setup();
    const response = await post(ctxJob.key, ctxJob.job.uuid, [{ name: 'photos', filename, type, body }]);
    expectRefused(response);
    expect(response.body.error.details).toEqual([
      { field: 'photos', code: 'invalid_format', message: expect.stringMatching(/JPEG, PNG, WebP, HEIC\/HEIF or GIF/) },
    ]);
    await expectNothingStored(ctxJob);
  });

  it('refuses the whole request when a lying file follows good ones', async () => {
    const ctxJob = await setup();
    const response = await post(ctxJob.key, ctxJob.job.uuid, [
      png('a.png'),
      { name: 'photos', filename: 'b.jpg', type: 'image/jpeg', body: JPEG_BYTES },
      { name: 'photos', filename: 'c.jpg', type: 'image/jpeg', body: ELF },
    ]);
    expectRefused(response);
    await expectNothingStored(ctxJob);
  });
});

describe('sizes and counts', () => {
  it('accepts a file of exactly MAX_PHOTO_BYTES and refuses one byte more', async () => {
    const ctxJob = await setup();
    const exact = await post(ctxJob.key, ctxJob.job.uuid, [{ ...png('exact.png'), body: pngOfSize(MAX_PHOTO_BYTES) }]);
    expect(exact.status, JSON.stringify(exact.body)).toBe(200);

    const other = await setup();
    const over = await post(other.key, other.job.uuid, [{ ...png('over.png'), body: pngOfSize(MAX_PHOTO_BYTES + 1) }]);
    expectRefused(over);
    expect(over.body.error.details).toEqual([{ field: 'photos', code: 'out_of_range', message: expect.stringContaining(String(MAX_PHOTO_BYTES)) }]);
    await expectNothingStored(other);
  });

  it('refuses 11 files (MAX_PHOTOS_PER_REQUEST is 10) and stores none; 10 are fine', async () => {
    const ctxJob = await setup();
    const eleven = await post(ctxJob.key, ctxJob.job.uuid, Array.from({ length: 11 }, (_, index) => png(`p${index}.png`)));
    expectRefused(eleven);
    await expectNothingStored(ctxJob);
    const ten = await post(ctxJob.key, ctxJob.job.uuid, Array.from({ length: 10 }, (_, index) => png(`p${index}.png`)));
    expect(ten.status).toBe(200);
    expect(ten.body.data.photos).toHaveLength(10);
  });

  it('refuses many non-file parts', async () => {
    const ctxJob = await setup();
    const fields = Array.from({ length: 500 }, (): RawPart => ({ name: 'photo_type', body: 'before' }));
    expectRefused(await post(ctxJob.key, ctxJob.job.uuid, [png(), ...fields]));
    expectRefused(await post(ctxJob.key, ctxJob.job.uuid, [...fields, png()]));
    await expectNothingStored(ctxJob);
  });

  it('refuses many empty or nameless parts', async () => {
    const ctxJob = await setup();
    const nameless = Array.from({ length: 300 }, (): RawPart => ({ name: '', body: '' }));
    expectRefused(await post(ctxJob.key, ctxJob.job.uuid, [png(), ...nameless]));
    await expectNothingStored(ctxJob);
  });

  it('copes with a part carrying a flood of headers (busboy keeps 16 KiB of them, ignores the rest)', async () => {
    const { company, key, job } = await setup();
    const headers = Array.from({ length: 2000 }, (_, index) => `X-Junk-${index}: ${'j'.repeat(50)}`);
    const response = await post(key, job.uuid, [{ ...png(), extraHeaders: headers }]);
    // Either refused cleanly or stored as the one PNG it is; never a 5xx, never more than one file.
    expect([200, 400, 413], JSON.stringify(response.body)).toContain(response.status);
    expect(response.body.success).toBe(response.status === 200);
    const stored = response.status === 200 ? 1 : 0;
    expect(filesOfJob(company.companyId, job.uuid)).toHaveLength(stored);
    expect(await photoCount(key, job.uuid)).toBe(stored);
  });

  it('refuses a 1 MB photo_type value and a 1 MB field name', async () => {
    const ctxJob = await setup();
    const huge = 'b'.repeat(1024 * 1024);
    const value = await post(ctxJob.key, ctxJob.job.uuid, [{ name: 'photo_type', body: huge }, png()]);
    expect([400, 413]).toContain(value.status);
    expect(value.body).toMatchObject({ success: false, error: { code: value.status === 400 ? 'validation_error' : 'payload_too_large' } });
    const valueAfterFile = await post(ctxJob.key, ctxJob.job.uuid, [png(), { name: 'photo_type', body: huge }]);
    expect([400, 413]).toContain(valueAfterFile.status);
    const name = await post(ctxJob.key, ctxJob.job.uuid, [png(), { name: 'n'.repeat(1024 * 1024), body: 'before' }]);
    expect([400, 413]).toContain(name.status);
    expect(name.body.success).toBe(false);
    await expectNothingStored(ctxJob);
  });

  it('refuses a huge non-multipart body with 413', async () => {
    const ctxJob = await setup();
    const response = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/jobs/${ctxJob.job.uuid}/photos`,
      headers: { authorization: `Bearer ${ctxJob.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ photos: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expectRefused({ status: response.statusCode, body: response.json() }, 413, 'payload_too_large');
    await expectNothingStored(ctxJob);
  });
});

describe('hostile file names', () => {
  const STORAGE_KEY = /^\/files\/[0-9a-f-]{36}\/[0-9a-f-]{36}\/[0-9a-f-]{36}\.png$/;
  it.each([
    ['a ../ path', '../../etc/passwd', ['passwd']],
    ['a Windows path', '..\\..\\windows\\system32\\evil.png', ['evil.png']],
    ['an absolute path', '/etc/shadow', ['shadow']],
    ['a NUL inside', 'a\u0000b.png', ['ab.png', 'a', null]],
    ['a NUL before a second extension', 'photo.png\u0000.exe', ['photo.png.exe', 'photo.png', null]],
    ['only a NUL', '\u0000', [null]],
    ['a bare ..', '..', ['..', null]],
    ['a CR LF (header injection)', 'line\r\nbreak.png', ['line', 'linebreak.png', null]],
    ['5000 characters', `${'x'.repeat(5000)}.png`, ['x'.repeat(255)]],
  ])('stores a file named with %s under a generated key with a safe display name', async (_label, filename, expected) => {
    const { company, key, job } = await setup();
    const response = await post(key, job.uuid, [png(filename)]);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const photo = response.body.data.photos[0];
    const keyPath = new URL(photo.photo_url).pathname;
    expect(keyPath).toMatch(STORAGE_KEY);
    const record = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos/${photo.uuid}`, { key });
    const fileName: string | null = record.body.data.file_name;
    if (fileName !== null) {
      expect(fileName).not.toMatch(/[\\/\u0000-\u001f\u007f]/);
      expect(fileName.length).toBeLessThanOrEqual(255);
      expect(keyPath).not.toContain(fileName);
    }
    // The parser may already cut the name at a NUL or a line break; either way it is one of these safe forms.
    expect(expected).toContain(fileName);
    // The only file written is the generated key, inside the upload root.
    expect(filesOfJob(company.companyId, job.uuid)).toEqual([path.join(company.companyId, job.uuid, `${photo.uuid}.png`)]);
    expect(allFiles().every((file) => /^[0-9a-f-]{36}\/[0-9a-f-]{36}\/[0-9a-f-]{36}\.(png|jpg|gif)$/.test(file))).toBe(true);
    expect(existsSync(path.join(uploadRoot, '..', 'etc'))).toBe(false);
  });
});

// ---- Real sockets: disconnects, huge streams, slow clients -----------------------------------------

interface RawResponse {
  status: number;
  body: any;
}

function parseResponse(raw: Buffer): RawResponse | null {
  const text = raw.toString('latin1');
  const headerEnd = text.indexOf('\r\n\r\n');
  if (headerEnd < 0) return null;
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(text.slice(0, headerEnd))?.[1] ?? NaN);
  const body = raw.subarray(Buffer.byteLength(text.slice(0, headerEnd + 4), 'latin1'));
  if (Number.isFinite(length) && body.length < length) return null;
  try {
    return { status, body: JSON.parse(body.toString('utf8')) };
  } catch {
    return { status, body: null };
  }
}

/** A raw HTTP connection: send the request head and body pieces yourself; read the response as it comes. */
function openUpload(key: string, jobUuid: string, boundary: string, contentLength?: number, serverPort = port) {
  const socket = connect(serverPort, '127.0.0.1');
  openSockets.add(socket);
  socket.setNoDelay(true);
  let received = Buffer.alloc(0);
  let closed = false;
  socket.on('data', (chunk) => (received = Buffer.concat([received, chunk])));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  const head = [
    `POST /api/v1/jobs/${jobUuid}/photos HTTP/1.1`,
    `Host: 127.0.0.1:${serverPort}`,
    `Authorization: Bearer ${key}`,
    `Content-Type: multipart/form-data; boundary=${boundary}`,
    contentLength === undefined ? 'Transfer-Encoding: chunked' : `Content-Length: ${contentLength}`,
  ];
  socket.write(`${head.join('\r\n')}\r\n\r\n`);
  const chunked = contentLength === undefined;
  return {
    socket,
    get closed() {
      return closed;
    },
    response: () => parseResponse(received),
    /** Writes one piece, waiting for the socket to drain (false once the server is gone). */
    async send(data: Buffer | string): Promise<boolean> {
      if (closed || socket.destroyed) return false;
      const bytes = Buffer.from(data);
      const framed = chunked ? Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]) : bytes;
      if (!socket.write(framed)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            socket.off('drain', done).off('close', done);
            resolve();
          };
          socket.on('drain', done).on('close', done);
        });
      }
      return !closed && !socket.destroyed;
    },
  };
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function partHead(boundary: string, filename = 'big.png') {
  return `--${boundary}\r\nContent-Disposition: form-data; name="photos"; filename="${filename}"\r\nContent-Type: image/png\r\n\r\n`;
}

describe('client disconnects mid-upload', () => {
  it('leaves no record and no file when the socket dies inside a file', async () => {
    const ctxJob = await setup();
    const boundary = 'disconnect1';
    const upload = openUpload(ctxJob.key, ctxJob.job.uuid, boundary, 10 * MAX_PHOTO_BYTES);
    await upload.send(partHead(boundary));
    await upload.send(pngOfSize(MAX_PHOTO_BYTES - 1000).subarray(0, 40 * 1024));
    // The server has started writing the file (a temporary file exists) when the client goes away.
    await waitFor(() => filesOfJob(ctxJob.company.companyId, ctxJob.job.uuid).length > 0, 10_000, 'the partial file');
    upload.socket.destroy();
    await waitFor(() => filesOfJob(ctxJob.company.companyId, ctxJob.job.uuid).length === 0, 10_000, 'the cleanup');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expectNothingStored(ctxJob);
  });

  it('leaves no record and no file when the socket dies after a whole file, before the form ends', async () => {
    const ctxJob = await setup();
    const boundary = 'disconnect2';
    const upload = openUpload(ctxJob.key, ctxJob.job.uuid, boundary);
    await upload.send(partHead(boundary, 'first.png'));
    await upload.send(PNG_BYTES);
    // The next boundary ends the first file: the server stores it, then waits for more.
    await upload.send(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="photos"; filename="second.png"\r\n`);
    await waitFor(
      () => filesOfJob(ctxJob.company.companyId, ctxJob.job.uuid).some((file) => file.endsWith('.png')),
      10_000,
      'the first file to be stored',
    );
    upload.socket.destroy();
    await waitFor(() => filesOfJob(ctxJob.company.companyId, ctxJob.job.uuid).length === 0, 10_000, 'the cleanup');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expectNothingStored(ctxJob);
  });
});

describe('huge streams', () => {
  it('refuses a file far over the limit without buffering it (bounded memory)', async () => {
    const ctxJob = await setup();
    const boundary = 'hugestream';
    const total = 256 * 1024 * 1024;
    const upload = openUpload(ctxJob.key, ctxJob.job.uuid, boundary, partHead(boundary).length + total + `\r\n--${boundary}--\r\n`.length);
    globalThis.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    await upload.send(partHead(boundary));
    await upload.send(PNG_BYTES);
    const chunk = Buffer.alloc(256 * 1024, 0x42);
    let sent = PNG_BYTES.length;
    while (sent < total && !upload.response() && !upload.closed) {
      const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
      if (!(await upload.send(piece))) break;
      sent += piece.length;
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    await waitFor(() => upload.response() !== null || upload.closed, 20_000, 'the response');
    const response = upload.response();
    upload.socket.destroy();
    expect(response, 'the server answered').not.toBeNull();
    expectRefused(response as RawResponse);
    expect((response as RawResponse).body.error.details).toEqual([{ field: 'photos', code: 'out_of_range', message: expect.stringMatching(/^has a file larger than the limit/) }]);
    // The server refused long before the end and never held the file in memory.
    expect(sent).toBeLessThan(total);
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
    await waitFor(() => filesOfJob(ctxJob.company.companyId, ctxJob.job.uuid).length === 0, 10_000, 'the cleanup');
    await expectNothingStored(ctxJob);
  });
});

describe('slow clients', () => {
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('a client trickling a valid photo gets it stored once, nothing else on disk', async () => {
    const { company, key, job } = await setup();
    const boundary = 'slowgood';
    const upload = openUpload(key, job.uuid, boundary);
    const body = Buffer.concat([Buffer.from(partHead(boundary, 'slow.png')), PNG_BYTES, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    for (let offset = 0; offset < body.length; offset += 16) {
      await upload.send(body.subarray(offset, offset + 16));
      await pause(10);
    }
    await upload.send(''); // the last chunk of a chunked body
    await waitFor(() => upload.response() !== null, 10_000, 'the response');
    upload.socket.destroy();
    const response = upload.response() as RawResponse;
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.photos).toHaveLength(1);
    expect(filesOfJob(company.companyId, job.uuid)).toEqual([path.join(company.companyId, job.uuid, `${response.body.data.photos[0].uuid}.png`)]);
  });

  it('a client trickling an oversized file is refused with 400 as soon as it passes the limit', async () => {
    const ctxJob = await setup();
    const boundary = 'slowbig';
    const upload = openUpload(ctxJob.key, ctxJob.job.uuid, boundary);
    await upload.send(partHead(boundary, 'slow-big.png'));
    await upload.send(PNG_BYTES);
    const piece = Buffer.alloc(8 * 1024, 0x43);
    let sent = PNG_BYTES.length;
    while (!upload.response() && !upload.closed && sent < 4 * MAX_PHOTO_BYTES) {
      if (!(await upload.send(piece))) break;
      sent += piece.length;
      await pause(5);
    }
    await waitFor(() => upload.response() !== null || upload.closed, 10_000, 'the response');
    upload.socket.destroy();
    expectRefused(upload.response() as RawResponse);
    expect(sent).toBeLessThan(4 * MAX_PHOTO_BYTES);
    await waitFor(() => filesOfJob(ctxJob.company.companyId, ctxJob.job.uuid).length === 0, 10_000, 'the cleanup');
    await expectNothingStored(ctxJob);
  });

  /**
   * A server with REQUEST_TIMEOUT_MS `timeoutMs`, and a customer create sent to it with its headers and only the
   * `{` of its body (`contentLength` bytes declared); `state` collects what the server writes back.
   */
  async function slowJsonCreate(timeoutMs: string, contentLength = 200) {
    const server = await buildApp({ config: testConfig({ UPLOAD_DIR: uploadRoot, REQUEST_TIMEOUT_MS: timeoutMs }), database: ctx.database });
    const { key } = await makeCompany(ctx.database);
    const address = await server.listen({ host: '127.0.0.1', port: 0 });
    const socket = connect(Number(new URL(address).port), '127.0.0.1');
    openSockets.add(socket);
    socket.on('error', () => undefined);
    const state = { answer: '', closed: false };
    socket.on('data', (chunk) => (state.answer += chunk.toString('utf8')));
    socket.on('close', () => (state.closed = true));
    socket.write(
      `POST /api/v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n{`,
    );
    const customerCount = async () => (await call(ctx.app, 'GET', '/api/v1/customers', { key })).body.data.pagination.total as number;
    return { server, socket, state, customerCount };
  }

  it('a body trickled a byte at a time is cut within seconds of REQUEST_TIMEOUT_MS, not at Node\'s 30 s check', async () => {
    const started = Date.now();
    const { server, socket, state } = await slowJsonCreate('2000');
    const trickle = setInterval(() => socket.write(' '), 200);
    try {
      await waitFor(() => state.answer.length > 0, 15_000, 'the trickled request to be answered');
    } finally {
      clearInterval(trickle);
    }
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    // The bound (2 s) plus its check interval (1 s) and scheduling.
    expect(elapsed).toBeLessThan(4_500);
    // Answered like headers that come too slowly: 400 in the envelope, then closed.
    await waitFor(() => state.closed, 5_000, 'the connection to be closed');
    expect(state.answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(state.answer).toContain('"code":"validation_error"');
    expect(state.answer).toContain('not received in time');
    socket.destroy();
    await server.close();
  });

  it('a body that arrives whole right after its 400 "not received in time" is not acted on', async () => {
    const body = JSON.stringify({ first_name: 'Late', last_name: 'Body' });
    const { server, socket, state, customerCount } = await slowJsonCreate('1000', body.length);
    // The rest of the body goes out the moment the refusal arrives, inside the second before the socket closes.
    socket.once('data', () => socket.write(body.slice(1)));
    await waitFor(() => state.answer.length > 0, 10_000, 'the refusal');
    await pause(1_500);
    expect(state.answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(state.answer).toContain('not received in time');
    // One answer only, and nothing written.
    expect(state.answer.match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(await customerCount()).toBe(0);
    socket.destroy();
    await server.close();
  });

  it('a JSON body still trickling in at shutdown is answered 503 at once; the close does not wait for it', async () => {
    const { server, socket, state, customerCount } = await slowJsonCreate('60000');
    const trickle = setInterval(() => socket.write(' '), 100);
    try {
      await pause(300);
      const started = Date.now();
      await server.close();
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      clearInterval(trickle);
    }
    await waitFor(() => state.closed, 5_000, 'the connection to be closed');
    expect(state.answer).toMatch(/^HTTP\/1\.1 503 /);
    expect(state.answer).toContain('"code":"service_unavailable"');
    expect(state.answer).toMatch(/x-request-id: \S+/);
    expect(await customerCount()).toBe(0);
  });

  it('a connection that never sends a byte is closed after REQUEST_TIMEOUT_MS; one in use, or waiting for a slow answer, is not', async () => {
    const config = testConfig({ UPLOAD_DIR: uploadRoot, REQUEST_TIMEOUT_MS: '1000' });
    const timed = { app: await buildApp({ config, database: ctx.database }) };
    // Test-only: an answer that takes longer than REQUEST_TIMEOUT_MS, as a write waiting on a lock may.
    timed.app.get('/__slow', async () => {
      await pause(1_800);
      return { answered: true };
    });
    const address = await timed.app.listen({ host: '127.0.0.1', port: 0 });
    const timedPort = Number(new URL(address).port);
    const silent = connect(timedPort, '127.0.0.1');
    openSockets.add(silent);
    silent.on('error', () => undefined);
    let closed = false;
    silent.on('close', () => (closed = true));
    const started = Date.now();
    await waitFor(() => closed, 10_000, 'the silent connection to be closed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    // The timeout counts silence, not the life of a connection: requests on it keep it open.
    const busy = connect(timedPort, '127.0.0.1');
    openSockets.add(busy);
    let answers = 0;
    busy.on('data', (chunk) => (answers += (chunk.toString('latin1').match(/HTTP\/1\.1 200/g) ?? []).length));
    for (let i = 0; i < 4; i++) {
      busy.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await pause(400);
    }
    await waitFor(() => answers === 4, 5_000, 'four answers on one connection');
    busy.destroy();
    const slow = await fetch(`${address}/__slow`);
    expect(slow.status).toBe(200);
    expect(await slow.json()).toEqual({ answered: true });
    await timed.app.close();
  });

  it('a client that stalls mid-file and then goes away leaves nothing behind', async () => {
    const ctxJob = await setup();
    const boundary = 'stall';
    const upload = openUpload(ctxJob.key, ctxJob.job.uuid, boundary);
    await upload.send(partHead(boundary, 'stall.png'));
    await upload.send(pngOfSize(20 * 1024));
    await waitFor(() => filesOfJob(ctxJob.company.companyId, ctxJob.job.uuid).length > 0, 10_000, 'the partial file');
    await pause(500);
    // Still waiting, nothing committed while the client is silent.
    expect(await photoCount(ctxJob.key, ctxJob.job.uuid)).toBe(0);
    upload.socket.destroy();
    await waitFor(() => filesOfJob(ctxJob.company.companyId, ctxJob.job.uuid).length === 0, 10_000, 'the cleanup');
    await expectNothingStored(ctxJob);
  });
});

describe('partial files (DECISIONS §11)', () => {
  it('a shutdown during an upload cuts it and removes its partial file; the close does not wait for the client', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'upload-shutdown-'));
    const other = await buildTestApp({ env: { UPLOAD_DIR: root, MAX_PHOTO_BYTES: String(MAX_PHOTO_BYTES) } });
    await other.app.listen({ host: '127.0.0.1', port: 0 });
    const otherPort = (other.app.server.address() as { port: number }).port;
    const company = await makeCompany(other.database);
    const job = await makeJob(other.app, company.key);
    const filesUnder = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
      );

    const boundary = 'shutdown1';
    const upload = openUpload(company.key, job.uuid, boundary, 10 * MAX_PHOTO_BYTES, otherPort);
    await upload.send(partHead(boundary));
    await upload.send(pngOfSize(MAX_PHOTO_BYTES - 1000).subarray(0, 40 * 1024));
    await waitFor(() => filesUnder(root).some((file) => file.endsWith('.partial')), 10_000, 'the partial file');

    // The client stalls (it neither sends nor leaves); the app closes as on SIGTERM.
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(filesUnder(root)).toEqual([]);
    const response = upload.response();
    if (response) expectRefused(response, 503, 'service_unavailable');
    upload.socket.destroy();
  });

  it('at start, local storage removes partial files older than an hour and keeps everything else', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'upload-sweep-'));
    const folder = path.join(root, '0190a5f0-0000-7000-8000-000000000001', '0190a5f0-0000-7000-8000-000000000002');
    mkdirSync(folder, { recursive: true });
    const photo = path.join(folder, '0190a5f0-0000-7000-8000-000000000003.png');
    const stale = `${photo}.a1b2c3d4e5f6.partial`;
    const fresh = `${photo}.0f1e2d3c4b5a.partial`;
    for (const file of [photo, stale, fresh]) writeFileSync(file, PNG_BYTES);
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    utimesSync(stale, twoHoursAgo, twoHoursAgo);
    utimesSync(photo, twoHoursAgo, twoHoursAgo);

    const storage = (await createStorage(loadConfig({ UPLOAD_DIR: root, DATA_DIR: root }))) as LocalStorage;
    expect(await storage.sweeping).toBe(1);
    expect(readdirSync(folder).sort()).toEqual([path.basename(photo), path.basename(fresh)].sort());
  });
});
