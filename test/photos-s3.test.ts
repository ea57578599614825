import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
// @ts-expect-error s3rver ships no type declarations; the part used here is typed below.
import S3rverUntyped from 's3rver';
import { Readable } from 'node:stream';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeOrphanFiles } from '../src/modules/job-photos/job-photos.service.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeCustomer } from './helpers/factories.js';
import { JPEG_BYTES, makeJob, PNG_BYTES, uploadPhotos } from './helpers/jobs-factories.js';

/** The photo endpoints end to end on the s3 driver: against s3rver always, and MinIO where Docker answers. */

interface S3rverServer {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
const S3rver = S3rverUntyped as new (options: Record<string, unknown>) => S3rverServer;

interface S3Endpoint {
  name: string;
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<unknown>;
}

async function startS3rver(): Promise<S3Endpoint> {
  const directory = mkdtempSync(path.join(tmpdir(), 's3rver-photos-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: 'job-photos', configs: [] }] });
  const { port } = await server.run();
  return { name: 's3rver', endpoint: `http://127.0.0.1:${port}`, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', stop: () => server.close() };
}

/** MinIO through testcontainers; null where no container runtime answers (as on CI here). */
async function startMinio(): Promise<S3Endpoint | null> {
  try {
    const { GenericContainer, Wait } = await import('testcontainers');
    const container = await new GenericContainer('minio/minio:latest')
      .withCommand(['server', '/data'])
      .withEnvironment({ MINIO_ROOT_USER: 'minioadmin', MINIO_ROOT_PASSWORD: 'minioadmin' })
      .withExposedPorts(9000)
      .withWaitStrategy(Wait.forHttp('/minio/health/ready', 9000))
      .start();
    const endpoint = `http://${container.getHost()}:${container.getMappedPort(9000)}`;
    const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
    const client = new S3Client({
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'minioadmin', secretAccessKey: 'minioadmin' },
    });
    await client.send(new CreateBucketCommand({ Bucket: 'job-photos' }));
    client.destroy();
    return { name: 'MinIO', endpoint, accessKeyId: 'minioadmin', secretAccessKey: 'minioadmin', stop: () => container.stop() };
  } catch {
    return null;
  }
}

const endpoints = [await startS3rver(), ...(process.env.CI ? [] : [await startMinio()])].filter(
  (endpoint): endpoint is S3Endpoint => endpoint !== null,
);
afterAll(async () => {
  for (const endpoint of endpoints) await endpoint.stop();
});

for (const s3 of endpoints) {
  describe(`photos on the s3 driver (${s3.name})`, async () => {
    const ctx = await buildTestApp({
      env: {
        STORAGE_DRIVER: 's3',
        S3_BUCKET: 'job-photos',
        S3_ENDPOINT: s3.endpoint,
        S3_FORCE_PATH_STYLE: 'true',
        S3_REGION: 'us-east-1',
      },
    });
    // The SDK takes credentials from the standard AWS variables, read when a client first signs.
    beforeAll(() => {
      process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
      process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    });

    it('uploads several files and serves the exact bytes through presigned links', async () => {
      const company = await makeCompany(ctx.database);
      const customer = await makeCustomer(ctx.app, company.key);
      const job = await makeJob(ctx.app, company.key, { customer_uuid: customer.uuid });
      const upload = await uploadPhotos(
        ctx.app,
        company.key,
        job.uuid,
        [
          { name: 'before.png', bytes: PNG_BYTES, type: 'image/png' },
          { name: 'after.jpg', bytes: JPEG_BYTES, type: 'image/jpeg' },
        ],
        { photo_type: 'after' },
      );
      expect(upload.status, JSON.stringify(upload.body)).toBe(200);
      expect(upload.body.data.photos).toHaveLength(2);
      const expected = [PNG_BYTES, JPEG_BYTES];
      for (const [index, photo] of upload.body.data.photos.entries()) {
        expect(photo.photo_type).toBe('after');
        expect(photo.photo_url.startsWith(`${s3.endpoint}/job-photos/`)).toBe(true);
        const fetched = await fetch(photo.photo_url);
        expect(fetched.status).toBe(200);
        expect(Buffer.from(await fetched.arrayBuffer()).equals(expected[index])).toBe(true);
      }
      const list = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos`, { key: company.key });
      expect(list.status).toBe(200);
      expect(list.body.data.pagination.total).toBe(2);
    });

    it('the orphan sweep lists the bucket and removes only files no photo names', async () => {
      const company = await makeCompany(ctx.database);
      const customer = await makeCustomer(ctx.app, company.key);
      const job = await makeJob(ctx.app, company.key, { customer_uuid: customer.uuid });
      const upload = await uploadPhotos(ctx.app, company.key, job.uuid, [{ name: 'kept.png', bytes: PNG_BYTES, type: 'image/png' }]);
      const kept = upload.body.data.photos[0];
      const storage = ctx.app.deps.storage;
      const orphan = `${company.companyId}/${job.uuid}/${uuidv7()}.jpg`;
      await storage.put(orphan, Readable.from([JPEG_BYTES]), { contentType: 'image/jpeg' });
      const keys: string[] = [];
      for await (const key of storage.keysWrittenBefore(new Date(Date.now() + 60_000))) keys.push(key);
      expect(keys).toContain(orphan);
      expect(keys).toContain(`${company.companyId}/${job.uuid}/${kept.uuid}.png`);
      expect(await removeOrphanFiles(ctx.database.db, storage, new Date(Date.now() + 60_000))).toBeGreaterThanOrEqual(1);
      expect(await storage.read(orphan)).toBeNull();
      const file = await fetch(kept.photo_url);
      expect(file.status).toBe(200);
      expect(Buffer.from(await file.arrayBuffer()).equals(PNG_BYTES)).toBe(true);
    });

    it('refuses a file that is not an image and stores nothing', async () => {
      const company = await makeCompany(ctx.database);
      const customer = await makeCustomer(ctx.app, company.key);
      const job = await makeJob(ctx.app, company.key, { customer_uuid: customer.uuid });
      const upload = await uploadPhotos(ctx.app, company.key, job.uuid, [
        { name: 'fake.jpg', bytes: Buffer.from('just some text, not a picture'), type: 'image/jpeg' },
      ]);
      expect(upload.status).toBe(400);
      expect(upload.body.error.code).toBe('validation_error');
      const list = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos`, { key: company.key });
      expect(list.body.data.pagination.total).toBe(0);
    });
  });
}
