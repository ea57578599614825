import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
// @ts-expect-error s3rver ships no type declarations; the part used here is typed below.
import S3rverUntyped from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createStorage } from '../src/storage/create-storage.js';
import { LocalStorage } from '../src/storage/local-storage.js';
import { S3Storage } from '../src/storage/s3-storage.js';
import { linkWindow } from '../src/storage/storage.js';
import { UrlSigner } from '../src/storage/url-signer.js';
import { JPEG_BYTES, PNG_BYTES } from './helpers/jobs-factories.js';

interface S3rverServer {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
const S3rver = S3rverUntyped as new (options: Record<string, unknown>) => S3rverServer;

const KEY = '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70/019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f71/019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f72.png';

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** A stream that sends some bytes and then fails, like an aborted upload. */
function failingStream(): Readable {
  return new Readable({
    read() {
      this.push(PNG_BYTES);
      this.destroy(new Error('client went away'));
    },
  });
}

describe('UrlSigner', () => {
  it('accepts its own unexpired signature only', () => {
    const signer = new UrlSigner('secret');
    const now = Date.now();
    const { expires, signature } = signer.link(KEY, 60, now);
    expect(expires).toBeGreaterThan(now / 1000 + 54);
    expect(expires).toBeLessThanOrEqual(now / 1000 + 60);
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(signer.verify(KEY, String(expires), signature, now)).toBe(true);
    expect(signer.verify(KEY, String(expires), signature, (expires + 1) * 1000)).toBe(false);
    expect(signer.verify(KEY.replace('.png', '.jpg'), String(expires), signature, now)).toBe(false);
    expect(new UrlSigner('other').verify(KEY, String(expires), signature, now)).toBe(false);
    expect(signer.verify(KEY, undefined, signature, now)).toBe(false);
    expect(signer.verify(KEY, String(expires), signature.toUpperCase(), now)).toBe(false);
    expect(signer.verify(KEY, String(expires), signature.slice(2), now)).toBe(false);
  });
});

describe('signed link windows', () => {
  it('gives one link per window, valid at most the TTL and at least the TTL less one window', () => {
    const signer = new UrlSigner('secret');
    const start = 1_800_000_000 * 1000; // a multiple of 60 s
    // A TTL of 60 s: windows of 6 s.
    const first = signer.link(KEY, 60, start);
    expect(first.expires).toBe(start / 1000 + 60);
    expect(signer.link(KEY, 60, start + 5_999)).toEqual(first);
    const next = signer.link(KEY, 60, start + 6_000);
    expect(next.expires).toBe(first.expires + 6);
    expect(next.signature).not.toBe(first.signature);
    for (let offset = 0; offset < 60_000; offset += 1_001) {
      const { expires } = signer.link(KEY, 60, start + offset);
      const lifetime = expires - (start + offset) / 1000;
      expect(lifetime).toBeGreaterThan(54);
      expect(lifetime).toBeLessThanOrEqual(60);
    }
    // A TTL of an hour: windows of a minute; a TTL of 5 s: a link per second, exactly the TTL.
    expect(linkWindow(3600, start + 59_999)).toEqual({ signedAt: start / 1000, expiresAt: start / 1000 + 3600 });
    expect(linkWindow(5, start + 1_500)).toEqual({ signedAt: start / 1000 + 1, expiresAt: start / 1000 + 6 });
  });

  it('keeps signedAt to expiresAt within a maximum lifetime', () => {
    const week = 7 * 24 * 3600;
    const now = 1_800_000_123_456;
    expect(linkWindow(3600, now, week)).toEqual({ signedAt: 1_800_000_120, expiresAt: 1_800_000_120 + 3600 });
    // A TTL above the maximum is the maximum.
    const long = linkWindow(8 * 24 * 3600, now, week);
    expect(long.expiresAt - long.signedAt).toBe(week);
    expect(linkWindow(week, now, week).expiresAt - Math.floor(now / 1000)).toBeLessThanOrEqual(week);
  });
});

describe('LocalStorage', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'local-storage-'));
  const storage = new LocalStorage(root, new UrlSigner('secret'));

  it('stores, reads and removes the exact bytes', async () => {
    await storage.put(KEY, Readable.from([PNG_BYTES.subarray(0, 10), PNG_BYTES.subarray(10)]), { contentType: 'image/png' });
    const stored = await storage.read(KEY);
    expect(stored?.size).toBe(PNG_BYTES.length);
    expect((await bytesOf(stored!.stream)).equals(PNG_BYTES)).toBe(true);
    await storage.remove(KEY);
    expect(await storage.read(KEY)).toBeNull();
    await expect(storage.remove(KEY)).resolves.toBeUndefined();
  });

  it('builds a signed link under the base URL', async () => {
    const url = new URL(await storage.url(KEY, { baseUrl: 'https://api.example.test/prefix', ttlSeconds: 120 }));
    expect(url.origin + url.pathname).toBe(`https://api.example.test/prefix/files/${KEY}`);
    expect(storage.signer.verify(KEY, url.searchParams.get('expires') ?? undefined, url.searchParams.get('signature') ?? undefined)).toBe(true);
  });

  it('leaves nothing behind when the stream fails', async () => {
    await expect(storage.put(KEY, failingStream(), { contentType: 'image/png' })).rejects.toThrow('client went away');
    expect(await storage.read(KEY)).toBeNull();
    expect(readdirSync(path.join(root, path.dirname(KEY)))).toEqual([]);
  });

  it('refuses keys it did not generate', async () => {
    for (const key of ['../escape.png', 'a/b/c.png', `${KEY}/../../x.png`, '/etc/passwd']) {
      await expect(storage.put(key, Readable.from([PNG_BYTES]), { contentType: 'image/png' })).rejects.toThrow('invalid storage key');
      expect(await storage.read(key)).toBeNull();
    }
  });
});

describe('createStorage', () => {
  it('makes local storage by default and S3 storage when configured', async () => {
    const local = await createStorage(loadConfig({ DATA_DIR: '/tmp/crm-data' }));
    expect(local).toBeInstanceOf(LocalStorage);
    expect((local as LocalStorage).root).toBe('/tmp/crm-data/uploads');
    const custom = await createStorage(loadConfig({ UPLOAD_DIR: '/tmp/crm-uploads' }));
    expect((custom as LocalStorage).root).toBe('/tmp/crm-uploads');
    const s3 = await createStorage(loadConfig({ STORAGE_DRIVER: 's3', S3_BUCKET: 'photos', S3_ENDPOINT: 'http://127.0.0.1:9', S3_FORCE_PATH_STYLE: 'true' }));
    expect(s3).toBeInstanceOf(S3Storage);
    expect(s3.driver).toBe('s3');
    (s3 as S3Storage).destroy();
  });
});

describe('S3Storage against s3rver', () => {
  const directory = mkdtempSync(path.join(tmpdir(), 's3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: 'photos', configs: [] }] });
  let storage: S3Storage;

  beforeAll(async () => {
    const { port } = await server.run();
    storage = new S3Storage({
      bucket: 'photos',
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  });
  afterAll(async () => {
    storage?.destroy();
    await server.close();
  });

  it('streams an object in and serves the exact bytes through a presigned URL', async () => {
    const key = KEY.replace('.png', '.jpg');
    await storage.put(key, Readable.from([JPEG_BYTES.subarray(0, 7), JPEG_BYTES.subarray(7)]), { contentType: 'image/jpeg' });
    const stored = await storage.read(key);
    expect(stored?.size).toBe(JPEG_BYTES.length);
    expect((await bytesOf(stored!.stream)).equals(JPEG_BYTES)).toBe(true);
    const url = await storage.url(key, { baseUrl: 'ignored', ttlSeconds: 60 });
    // Signature checking is S3's job (s3rver does not check it); the link must be presigned and path-style,
    // signed as of the start of its window (6 s for a 60 s TTL) and valid for the TTL from there.
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/photos\/.+X-Amz-Expires=60.*X-Amz-Signature=[0-9a-f]{64}/);
    const signedAt = /X-Amz-Date=(\d{8}T\d{4})(\d\d)Z/.exec(url);
    expect(Number(signedAt?.[2]) % 6).toBe(0);
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    expect(Buffer.from(await response.arrayBuffer()).equals(JPEG_BYTES)).toBe(true);
    await storage.remove(key);
    expect(await storage.read(key)).toBeNull();
  });

  it('names the public endpoint in presigned links when it differs from the one the API uses', async () => {
    const publicStorage = new S3Storage({
      bucket: 'photos',
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:1`,
      publicEndpoint: 'http://localhost:9000',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    try {
      const url = await publicStorage.url('photos/a.jpg', { baseUrl: 'ignored', ttlSeconds: 60 });
      expect(url).toMatch(/^http:\/\/localhost:9000\/photos\/photos\/a\.jpg\?.*X-Amz-Signature=[0-9a-f]{64}/);
    } finally {
      publicStorage.destroy();
    }
  });

  it('gives the same presigned URL for every call within one window', async () => {
    const ttlSeconds = 3600;
    const urls = [await storage.url(KEY, { baseUrl: 'ignored', ttlSeconds })];
    urls.push(await storage.url(KEY, { baseUrl: 'ignored', ttlSeconds }));
    const { signedAt } = linkWindow(ttlSeconds, Date.now());
    // Unless the window turned between the two calls (at most once a minute), they are the same link.
    if (Date.now() / 1000 - signedAt > 1) expect(urls[1]).toBe(urls[0]);
    expect(urls[0]).toContain('X-Amz-Expires=3600');
  });

  it('stores nothing when the stream fails', async () => {
    await expect(storage.put(KEY, failingStream(), { contentType: 'image/png' })).rejects.toThrow();
    expect(await storage.read(KEY)).toBeNull();
  });
});
