import { mkdtempSync, readdirSync, existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PassThrough, Readable } from 'node:stream';
import { v7 as uuidv7 } from 'uuid';
import { removeOrphanFiles } from '../src/modules/job-photos/job-photos.service.js';
import { LocalStorage } from '../src/storage/local-storage.js';
import { UrlSigner } from '../src/storage/url-signer.js';
import { buildTestApp, call } from './helpers/app.js';
import { waitForFeed } from './helpers/events.js';
import { makeCompany, makeKey, makeUser } from './helpers/factories.js';
import { GIF_BYTES, JPEG_BYTES, makeJob, multipartBody, pathOf, PNG_BYTES, uploadPhotos } from './helpers/jobs-factories.js';

const uploadRoot = mkdtempSync(path.join(tmpdir(), 'photos-test-'));
const storage = new LocalStorage(uploadRoot, new UrlSigner('test-secret'));
const ctx = await buildTestApp({ storage, env: { PUBLIC_BASE_URL: 'https://api.example.test' } });
const limitedRoot = mkdtempSync(path.join(tmpdir(), 'photos-limited-'));
const limited = await buildTestApp({
  storage: new LocalStorage(limitedRoot, new UrlSigner('limited-secret')),
  env: { MAX_PHOTO_BYTES: '200', MAX_PHOTOS_PER_REQUEST: '2', UPLOADS_PER_COMPANY: '1' },
});

const TEXT = Buffer.from('just some text, not an image at all\n');

async function setup(app = ctx.app, database = ctx.database) {
  const company = await makeCompany(database);
  const job = await makeJob(app, company.key);
  return { company, key: company.key, job };
}

function filesOf(root: string, companyId: string, jobUuid: string): string[] {
  const dir = path.join(root, companyId, jobUuid);
  return existsSync(dir) ? readdirSync(dir) : [];
}

async function fetchFile(url: string) {
  return ctx.app.inject({ method: 'GET', url: pathOf(url) });
}

/** Every field of a photo as GET /jobs/{job_uuid}/photos/{photo_uuid} answers it. */
const PHOTO_FIELDS = [
  'created_at',
  'customer_email_sent',
  'deleted_at',
  'file_name',
  'file_size',
  'job_uuid',
  'mime_type',
  'photo_type',
  'photo_url',
  'taken_at',
  'updated_at',
  'user',
  'user_id',
  'uuid',
];

/**
 * A photo with its link's signature left out: links are signed per time window, so an upload and a GET a
 * window boundary apart carry different (equally valid) query strings for the same file.
 */
function withUnsignedLink(photo: Record<string, unknown>) {
  const link = new URL(photo.photo_url as string);
  return { ...photo, photo_url: `${link.origin}${link.pathname}` };
}

/** Uploads the files with a key of a named user and checks that each answered photo is exactly its GET. */
async function expectUploadAnswersGets(files: Parameters<typeof uploadPhotos>[3], fields: Record<string, string>) {
  const { company, job } = await setup();
  const userId = await makeUser(ctx.database, company.companyId, 'Rosa', 'Díaz');
  const key = (await makeKey(ctx.database, company.companyId, { userId })).api_key as string;
  const response = await uploadPhotos(ctx.app, key, job.uuid, files, fields);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.success).toBe(true);
  expect(Object.keys(response.body.data)).toEqual(['photos']);
  const photos = response.body.data.photos as Array<Record<string, unknown>>;
  expect(photos).toHaveLength(files.length);
  for (const [index, photo] of photos.entries()) {
    const get = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos/${photo.uuid}`, { key });
    expect(get.status).toBe(200);
    expect(Object.keys(photo)).toEqual(Object.keys(get.body.data));
    expect(withUnsignedLink(photo)).toStrictEqual(withUnsignedLink(get.body.data));
    expect(photo).toMatchObject({
      job_uuid: job.uuid,
      user_id: userId,
      user: { id: userId, first_name: 'Rosa', last_name: 'Díaz' },
      file_size: files[index]!.bytes.length,
      customer_email_sent: false,
      deleted_at: null,
    });
    // The answered link itself serves the file.
    expect((await fetchFile(photo.photo_url as string)).rawPayload.equals(files[index]!.bytes)).toBe(true);
  }
  return { photos, job, key };
}

describe('POST /jobs/{job_uuid}/photos', () => {
  it('stores several real images and serves the exact bytes through photo_url without a key', async () => {
    const { company, key, job } = await setup();
    const response = await uploadPhotos(
      ctx.app,
      key,
      job.uuid,
      [
        { name: 'before.png', bytes: PNG_BYTES, type: 'image/png' },
        { name: '../../etc/passwd.jpg', bytes: JPEG_BYTES, type: 'text/plain' },
        { field: 'photo', name: 'c.gif', bytes: GIF_BYTES },
      ],
      { photo_type: 'before', taken_at: '2026-11-20T10:00:00+02:00' },
    );
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
    const photos = response.body.data.photos;
    expect(photos).toHaveLength(3);
    for (const photo of photos) {
      expect(Object.keys(photo).sort()).toEqual(PHOTO_FIELDS);
      expect(photo).toMatchObject({ photo_type: 'before', taken_at: '2026-11-20T08:00:00.000Z' });
      expect(photo.photo_url).toMatch(
        new RegExp(`^https://api\\.example\\.test/files/${company.companyId}/${job.uuid}/${photo.uuid}\\.(png|jpg|gif)\\?expires=\\d+&signature=[0-9a-f]{64}$`),
      );
    }
    const [png, jpeg, gif] = await Promise.all(photos.map((photo: { photo_url: string }) => fetchFile(photo.photo_url)));
    expect(png.statusCode).toBe(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect(png.rawPayload.equals(PNG_BYTES)).toBe(true);
    expect(jpeg.statusCode).toBe(200);
    expect(jpeg.headers['content-type']).toBe('image/jpeg');
    expect(jpeg.rawPayload.equals(JPEG_BYTES)).toBe(true);
    expect(gif.headers['content-type']).toBe('image/gif');
    expect(gif.rawPayload.equals(GIF_BYTES)).toBe(true);
    expect(filesOf(uploadRoot, company.companyId, job.uuid).sort()).toEqual(
      [`${photos[0].uuid}.png`, `${photos[1].uuid}.jpg`, `${photos[2].uuid}.gif`].sort(),
    );

    const get = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos/${photos[1].uuid}`, { key });
    expect(get.status).toBe(200);
    expect(get.body.data).toMatchObject({
      uuid: photos[1].uuid,
      job_uuid: job.uuid,
      user_id: company.userId,
      photo_type: 'before',
      file_name: 'passwd.jpg',
      file_size: JPEG_BYTES.length,
      mime_type: 'image/jpeg',
      taken_at: '2026-11-20T08:00:00.000Z',
      customer_email_sent: false,
      deleted_at: null,
      user: { id: company.userId, first_name: expect.any(String), last_name: expect.any(String) },
    });
    expect((await fetchFile(get.body.data.photo_url)).rawPayload.equals(JPEG_BYTES)).toBe(true);
  });

  it('answers one photo exactly as its GET does (mime_type sniffed from the bytes, file_size, user)', async () => {
    const { photos } = await expectUploadAnswersGets([{ name: 'holiday.jpg', bytes: PNG_BYTES, type: 'image/jpeg' }], {
      photo_type: 'after',
    });
    expect(photos[0]).toMatchObject({ file_name: 'holiday.jpg', mime_type: 'image/png', photo_type: 'after', taken_at: null });
  });

  it('answers several photos, in upload order, each exactly as its GET does', async () => {
    const files = [
      { name: 'a.gif', bytes: GIF_BYTES, type: 'image/png' },
      { name: 'b.png', bytes: PNG_BYTES },
      { field: 'photo', name: 'c.bin', bytes: JPEG_BYTES, type: 'application/octet-stream' },
      { field: 'file', name: 'd.png', bytes: PNG_BYTES, type: 'image/png' },
    ];
    const { photos, job, key } = await expectUploadAnswersGets(files, { photo_type: 'before', taken_at: '2026-11-20T10:00:00-05:00' });
    expect(photos.map((photo) => [photo.file_name, photo.mime_type])).toEqual([
      ['a.gif', 'image/gif'],
      ['b.png', 'image/png'],
      ['c.bin', 'image/jpeg'],
      ['d.png', 'image/png'],
    ]);
    for (const photo of photos) expect(photo).toMatchObject({ photo_type: 'before', taken_at: '2026-11-20T15:00:00.000Z' });
    // The list answers the same records.
    const list = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos?limit=10`, { key });
    expect(list.status).toBe(200);
    const listed = new Map((list.body.data.photos as Array<Record<string, unknown>>).map((photo) => [photo.uuid, photo]));
    for (const photo of photos) expect(withUnsignedLink(listed.get(photo.uuid)!)).toStrictEqual(withUnsignedLink(photo));
    // Each job_photo.created event carries the same record, one per file in upload order.
    const events = await waitForFeed(ctx.app, key, photos.length, { type: 'job_photo.created' });
    expect(events.map((event) => event.object_uuid)).toEqual(photos.map((photo) => photo.uuid));
    for (const [index, event] of events.entries()) {
      expect(withUnsignedLink(event.data.object as Record<string, unknown>)).toStrictEqual(withUnsignedLink(photos[index]!));
    }
  });

  it('defaults photo_type to during and accepts the file field', async () => {
    const { key, job } = await setup();
    const response = await uploadPhotos(ctx.app, key, job.uuid, [{ field: 'file', name: 'x.png', bytes: PNG_BYTES }]);
    expect(response.status).toBe(200);
    expect(response.body.data.photos).toEqual([
      expect.objectContaining({
        uuid: expect.any(String),
        photo_url: expect.any(String),
        photo_type: 'during',
        taken_at: null,
        created_at: expect.stringMatching(/Z$/),
      }),
    ]);
  });

  it.each([
    ['a text file named .jpg', [{ name: 'fake.jpg', bytes: TEXT, type: 'image/jpeg' }], {}],
    ['an empty file', [{ name: 'empty.png', bytes: Buffer.alloc(0) }], {}],
    ['an invalid photo_type', [{ name: 'a.png', bytes: PNG_BYTES }], { photo_type: 'sideways' }],
    ['a taken_at without offset', [{ name: 'a.png', bytes: PNG_BYTES }], { taken_at: '2026-11-20T10:00:00' }],
    ['an unknown field', [{ name: 'a.png', bytes: PNG_BYTES }], { caption: 'hi' }],
    ['a file in an unknown field', [{ field: 'image', name: 'a.png', bytes: PNG_BYTES }], {}],
    ['no file', [], { photo_type: 'after' }],
  ])('rejects %s with 400 and stores nothing', async (_label, files, fields) => {
    const { company, key, job } = await setup();
    const response = await uploadPhotos(ctx.app, key, job.uuid, files, fields);
    expect(response.status).toBe(400);
    expect(response.body.success).toBe(false);
    expect(response.body.error.code).toBe('validation_error');
    expect(filesOf(uploadRoot, company.companyId, job.uuid)).toEqual([]);
    const list = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos`, { key });
    expect(list.body.data.pagination.total).toBe(0);
  });

  it('removes the files already stored when a later file of the request fails', async () => {
    const { company, key, job } = await setup();
    const response = await uploadPhotos(ctx.app, key, job.uuid, [
      { name: 'good.png', bytes: PNG_BYTES },
      { name: 'good.jpg', bytes: JPEG_BYTES },
      { name: 'bad.jpg', bytes: TEXT },
    ]);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'validation_error', details: [{ field: 'photos' }] });
    expect(filesOf(uploadRoot, company.companyId, job.uuid)).toEqual([]);
    const list = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos?include_deleted=true`, { key });
    expect(list.body.data).toEqual({ photos: [], pagination: { page: 1, limit: 50, total: 0, total_pages: 0 } });
  });

  it('rejects a photo_type sent after the files and removes them', async () => {
    const { company, key, job } = await setup();
    const { multipartBody } = await import('./helpers/jobs-factories.js');
    const form = await multipartBody([{ name: 'a.png', bytes: PNG_BYTES }]);
    const trailer = form.payload.toString('latin1').replace(
      /--(\S+)--\r\n$/,
      (_match, boundary: string) => `--${boundary}\r\nContent-Disposition: form-data; name="photo_type"\r\n\r\nlater\r\n--${boundary}--\r\n`,
    );
    const response = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/jobs/${job.uuid}/photos`,
      headers: { authorization: `Bearer ${key}`, 'content-type': form.contentType },
      payload: Buffer.from(trailer, 'latin1'),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toEqual([{ field: 'photo_type', code: 'invalid_enum', message: 'must be before, during or after' }]);
    expect(filesOf(uploadRoot, company.companyId, job.uuid)).toEqual([]);
  });

  it('rejects a body that is not multipart', async () => {
    const { key, job } = await setup();
    const response = await call(ctx.app, 'POST', `/api/v1/jobs/${job.uuid}/photos`, { key, body: { photos: [] } });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
  });

  it('rejects a file over MAX_PHOTO_BYTES and keeps nothing', async () => {
    const { company, key, job } = await setup(limited.app, limited.database);
    const big = Buffer.concat([PNG_BYTES, Buffer.alloc(500)]);
    const response = await uploadPhotos(limited.app, key, job.uuid, [
      { name: 'small.png', bytes: PNG_BYTES },
      { name: 'big.png', bytes: big },
    ]);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'validation_error', details: [{ field: 'photos' }] });
    expect(filesOf(limitedRoot, company.companyId, job.uuid)).toEqual([]);
    const list = await call(limited.app, 'GET', `/api/v1/jobs/${job.uuid}/photos`, { key });
    expect(list.body.data.pagination.total).toBe(0);
  });

  it('rejects more than MAX_PHOTOS_PER_REQUEST files and keeps nothing', async () => {
    const { company, key, job } = await setup(limited.app, limited.database);
    const file = { name: 'a.png', bytes: PNG_BYTES };
    const response = await uploadPhotos(limited.app, key, job.uuid, [file, file, file]);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('validation_error');
    expect(filesOf(limitedRoot, company.companyId, job.uuid)).toEqual([]);
    const ok = await uploadPhotos(limited.app, key, job.uuid, [file, file]);
    expect(ok.status).toBe(200);
    expect(ok.body.data.photos).toHaveLength(2);
  });
});

describe('job access', () => {
  it('is 404 for a missing, deleted or other company job on every photo endpoint', async () => {
    const { key, job } = await setup();
    const other = await setup();
    const upload = await uploadPhotos(ctx.app, other.key, other.job.uuid, [{ name: 'a.png', bytes: PNG_BYTES }]);
    const otherPhoto = upload.body.data.photos[0].uuid;
    const deleted = await makeJob(ctx.app, key);
    expect((await call(ctx.app, 'DELETE', `/api/v1/jobs/${deleted.uuid}`, { key })).status).toBe(200);
    for (const jobUuid of ['019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70', deleted.uuid, other.job.uuid]) {
      const responses = [
        await call(ctx.app, 'GET', `/api/v1/jobs/${jobUuid}/photos`, { key }),
        await call(ctx.app, 'GET', `/api/v1/jobs/${jobUuid}/photos?include_deleted=true`, { key }),
        await call(ctx.app, 'GET', `/api/v1/jobs/${jobUuid}/photos/${otherPhoto}?include_deleted=true`, { key }),
        await call(ctx.app, 'DELETE', `/api/v1/jobs/${jobUuid}/photos/${otherPhoto}`, { key }),
        await uploadPhotos(ctx.app, key, jobUuid, [{ name: 'a.png', bytes: PNG_BYTES }]),
      ];
      for (const response of responses) {
        expect(response.status).toBe(404);
        expect(response.body.error.code).toBe('not_found');
      }
    }
    // A photo is addressed only under its own job.
    const wrongJob = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos/${otherPhoto}`, { key });
    expect(wrongJob.status).toBe(404);
    const stillThere = await call(ctx.app, 'GET', `/api/v1/jobs/${other.job.uuid}/photos/${otherPhoto}`, { key: other.key });
    expect(stillThere.status).toBe(200);
    expect(stillThere.body.data.deleted_at).toBeNull();
  });

  it('needs the photos add-on (403 addon_required)', async () => {
    const company = await makeCompany(ctx.database, { addons: [] });
    const job = await makeJob(ctx.app, company.key);
    const list = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos`, { key: company.key });
    expect(list.status).toBe(403);
    expect(list.body.error.code).toBe('addon_required');
    const upload = await uploadPhotos(ctx.app, company.key, job.uuid, [{ name: 'a.png', bytes: PNG_BYTES }]);
    expect(upload.status).toBe(403);
    expect(upload.body.error.code).toBe('addon_required');
  });
});

describe('GET /jobs/{job_uuid}/photos', () => {
  it('lists newest first with the user embed, filters by photo_type and paginates', async () => {
    const { company, key, job } = await setup();
    const before = await uploadPhotos(ctx.app, key, job.uuid, [{ name: 'b.png', bytes: PNG_BYTES }], { photo_type: 'before' });
    const after = await uploadPhotos(ctx.app, key, job.uuid, [{ name: 'a.jpg', bytes: JPEG_BYTES }], { photo_type: 'after' });
    expect(before.status).toBe(200);
    expect(after.status).toBe(200);
    const list = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos`, { key });
    expect(list.status).toBe(200);
    expect(list.body.data.pagination).toEqual({ page: 1, limit: 50, total: 2, total_pages: 1 });
    expect(list.body.data.photos.map((photo: { uuid: string }) => photo.uuid)).toEqual([
      after.body.data.photos[0].uuid,
      before.body.data.photos[0].uuid,
    ]);
    expect(list.body.data.photos[0]).toMatchObject({
      job_uuid: job.uuid,
      photo_type: 'after',
      file_name: 'a.jpg',
      mime_type: 'image/jpeg',
      user: { id: company.userId },
    });
    const filtered = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos?photo_type=before&limit=1`, { key });
    expect(filtered.body.data.photos).toHaveLength(1);
    expect(filtered.body.data.photos[0].photo_type).toBe('before');
    expect(filtered.body.data.pagination).toEqual({ page: 1, limit: 1, total: 1, total_pages: 1 });
    const bad = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos?photo_type=sideways`, { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');
  });
});

describe('DELETE /jobs/{job_uuid}/photos/{photo_uuid}', () => {
  it('soft-deletes the record and keeps the file', async () => {
    const { company, key, job } = await setup();
    const upload = await uploadPhotos(ctx.app, key, job.uuid, [{ name: 'a.png', bytes: PNG_BYTES }]);
    const photo = upload.body.data.photos[0];
    const deleted = await call(ctx.app, 'DELETE', `/api/v1/jobs/${job.uuid}/photos/${photo.uuid}`, { key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, data: { message: 'Photo deleted successfully' } });
    const get = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos/${photo.uuid}`, { key });
    expect(get.status).toBe(404);
    expect(get.body.error.code).toBe('not_found');
    const withDeleted = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos/${photo.uuid}?include_deleted=true`, { key });
    expect(withDeleted.status).toBe(200);
    expect(withDeleted.body.data.deleted_at).toMatch(/Z$/);
    const list = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos`, { key });
    expect(list.body.data.pagination.total).toBe(0);
    const listAll = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos?include_deleted=true`, { key });
    expect(listAll.body.data.pagination.total).toBe(1);
    expect(filesOf(uploadRoot, company.companyId, job.uuid)).toEqual([`${photo.uuid}.png`]);
    const file = await fetchFile(withDeleted.body.data.photo_url);
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.equals(PNG_BYTES)).toBe(true);
    const again = await call(ctx.app, 'DELETE', `/api/v1/jobs/${job.uuid}/photos/${photo.uuid}`, { key });
    expect(again.status).toBe(404);
  });
});

describe('the orphan sweep', () => {
  it('removes files no photo row names, older than its cutoff, and keeps live and deleted photos\' files', async () => {
    const { company, key, job } = await setup();
    const kept = (await uploadPhotos(ctx.app, key, job.uuid, [{ name: 'a.png', bytes: PNG_BYTES }])).body.data.photos[0];
    const deleted = (await uploadPhotos(ctx.app, key, job.uuid, [{ name: 'b.png', bytes: PNG_BYTES }])).body.data.photos[0];
    expect((await call(ctx.app, 'DELETE', `/api/v1/jobs/${job.uuid}/photos/${deleted.uuid}`, { key })).status).toBe(200);
    // What an upload leaves when its process dies between storing its files and committing their rows.
    const orphan = `${company.companyId}/${job.uuid}/${uuidv7()}.jpg`;
    await storage.put(orphan, Readable.from([JPEG_BYTES]), { contentType: 'image/jpeg' });
    const other = await setup();
    const foreignOrphan = `${other.company.companyId}/${other.job.uuid}/${uuidv7()}.png`;
    await storage.put(foreignOrphan, Readable.from([PNG_BYTES]), { contentType: 'image/png' });
    // A company this database does not know: another deployment sharing the storage keeps its files.
    const unknownCompany = uuidv7();
    const elsewhere = `${unknownCompany}/${uuidv7()}/${uuidv7()}.png`;
    await storage.put(elsewhere, Readable.from([PNG_BYTES]), { contentType: 'image/png' });
    // A stray file whose name only looks like a key: left alone, and the sweep goes on past it.
    const stray = `${company.companyId}/${job.uuid}/${'-'.repeat(36)}.png`;
    await storage.put(stray, Readable.from([PNG_BYTES]), { contentType: 'image/png' });

    // Files written after the cutoff are left alone: an upload may still be committing them.
    expect(await removeOrphanFiles(ctx.database.db, storage, new Date(Date.now() - 3600_000))).toBe(0);
    expect(filesOf(uploadRoot, company.companyId, job.uuid)).toHaveLength(4);

    const removed = await removeOrphanFiles(ctx.database.db, storage, new Date(Date.now() + 1000));
    expect(removed).toBeGreaterThanOrEqual(2);
    expect(filesOf(uploadRoot, company.companyId, job.uuid).sort()).toEqual([`${kept.uuid}.png`, `${deleted.uuid}.png`, `${'-'.repeat(36)}.png`].sort());
    expect(filesOf(uploadRoot, other.company.companyId, other.job.uuid)).toEqual([]);
    expect(existsSync(path.join(uploadRoot, elsewhere))).toBe(true);
    const file = await fetchFile(kept.photo_url);
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.equals(PNG_BYTES)).toBe(true);
  });
});

describe('GET /files/* (signed links)', () => {
  it('refuses tampered, expired, foreign and traversal links with 404', async () => {
    const { key, job } = await setup();
    const upload = await uploadPhotos(ctx.app, key, job.uuid, [{ name: 'a.png', bytes: PNG_BYTES }]);
    const url = new URL(upload.body.data.photos[0].photo_url);
    const storageKey = url.pathname.replace('/files/', '');
    const expires = Number(url.searchParams.get('expires'));
    const signature = url.searchParams.get('signature') as string;
    const past = Math.floor(Date.now() / 1000) - 10;
    const otherSigner = new UrlSigner('another-secret');
    const flipped = (signature[0] === 'a' ? 'b' : 'a') + signature.slice(1);
    const attempts = [
      `/files/${storageKey}`,
      `/files/${storageKey}?expires=${expires}`,
      `/files/${storageKey}?expires=${expires}&signature=${flipped}`,
      `/files/${storageKey}?expires=${expires + 1}&signature=${signature}`,
      `/files/${storageKey}?expires=0${expires}&signature=${signature}`,
      `/files/${storageKey}?expires=${expires}&signature=${signature.toUpperCase()}`,
      `/files/${storageKey}?expires=${past}&signature=${new UrlSigner('test-secret').sign(storageKey, past)}`,
      `/files/${storageKey}?expires=${expires}&signature=${otherSigner.sign(storageKey, expires)}`,
      `/files/${storageKey}?expires=${expires}&signature=xyz`,
      `/files/../../etc/passwd?expires=${expires}&signature=${signature}`,
      `/files/..%2F..%2Fetc%2Fpasswd?expires=${expires}&signature=${new UrlSigner('test-secret').sign('../../etc/passwd', expires)}`,
    ];
    for (const attempt of attempts) {
      const response = await ctx.app.inject({ method: 'GET', url: attempt });
      expect(response.statusCode, attempt).toBe(404);
      expect(response.json()).toMatchObject({ success: false, error: { code: 'not_found' } });
    }
    const good = await ctx.app.inject({ method: 'GET', url: url.pathname + url.search });
    expect(good.statusCode).toBe(200);
    expect(good.rawPayload.equals(PNG_BYTES)).toBe(true);
  });

  it("uses the request's host when PUBLIC_BASE_URL is not set", async () => {
    const { key, job } = await setup(limited.app, limited.database);
    const upload = await uploadPhotos(limited.app, key, job.uuid, [{ name: 'a.png', bytes: PNG_BYTES }]);
    expect(upload.status).toBe(200);
    expect(upload.body.data.photos[0].photo_url).toMatch(/^http:\/\/localhost(:80)?\/files\//);
    const file = await limited.app.inject({ method: 'GET', url: pathOf(upload.body.data.photos[0].photo_url) });
    expect(file.statusCode).toBe(200);
    expect(file.rawPayload.equals(PNG_BYTES)).toBe(true);
  });
});

describe('uploads of one company beyond UPLOADS_PER_COMPANY', () => {
  it("wait unread for the company's upload in progress, while another company's upload goes on", async () => {
    const a = await setup(limited.app, limited.database);
    const b = await setup(limited.app, limited.database);
    const inject = (key: string, jobUuid: string, contentType: string, payload: Buffer | PassThrough) =>
      limited.app.inject({ method: 'POST', url: `/api/v1/jobs/${jobUuid}/photos`, headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, payload });
    const settled = <T>(promise: Promise<T>) => {
      const state = { done: false };
      void promise.finally(() => (state.done = true));
      return state;
    };

    /** Resolves once the server has read everything `stream` holds (an inject body is read as the handler reads it). */
    const drained = async (stream: PassThrough) => {
      for (let waited = 0; stream.readableLength > 0; waited += 20) {
        if (waited > 10_000) throw new Error('the upload was never read');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    // A's first upload sends the start of its body and holds the rest: once read, it holds A's one place.
    const first = await multipartBody([{ name: 'a.jpg', bytes: JPEG_BYTES }]);
    const held = new PassThrough();
    held.write(first.payload.subarray(0, 60));
    const firstResponse = inject(a.key, a.job.uuid, first.contentType, held);
    await drained(held);
    const second = await multipartBody([{ name: 'b.png', bytes: PNG_BYTES }]);
    const waiting = new PassThrough();
    waiting.end(second.payload);
    const secondResponse = inject(a.key, a.job.uuid, second.contentType, waiting);
    const secondState = settled(secondResponse);

    // B's upload is answered; A's second is not read at all while A's first holds the place.
    const other = await multipartBody([{ name: 'c.gif', bytes: GIF_BYTES }]);
    const otherResponse = await inject(b.key, b.job.uuid, other.contentType, other.payload);
    expect(otherResponse.statusCode, otherResponse.body).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(waiting.readableLength).toBe(second.payload.length);
    expect(secondState.done).toBe(false);

    held.end(first.payload.subarray(60));
    const [firstDone, secondDone] = await Promise.all([firstResponse, secondResponse]);
    expect(firstDone.statusCode, firstDone.body).toBe(200);
    expect(secondDone.statusCode, secondDone.body).toBe(200);
    expect(firstDone.json().data.photos[0].mime_type).toBe('image/jpeg');
    expect(secondDone.json().data.photos[0].mime_type).toBe('image/png');
    const listed = await call(limited.app, 'GET', `/api/v1/jobs/${a.job.uuid}/photos`, { key: a.key });
    expect(listed.body.data.photos).toHaveLength(2);
  });

  it("one that is cut while it waits gives up its turn: the company's next upload is read at once", { timeout: 30_000 }, async () => {
    const gated = await buildTestApp({ storage: new LocalStorage(limitedRoot, new UrlSigner('gated-secret')), env: { UPLOADS_PER_COMPANY: '1' } });
    const base = await gated.app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const a = await setup(gated.app, gated.database);
      const body = await multipartBody([{ name: 'a.jpg', bytes: JPEG_BYTES }]);
      /** An upload over a real connection that sends `sent` bytes of its body, then waits for end() or cut(). */
      const open = (sent: number) => {
        const request = httpRequest(`${base}/api/v1/jobs/${a.job.uuid}/photos`, {
          method: 'POST',
          headers: { authorization: `Bearer ${a.key}`, 'content-type': body.contentType, 'content-length': body.payload.length },
        });
        const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
          request.on('response', (response) => {
            let text = '';
            response.on('data', (chunk) => (text += chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
          });
          request.on('error', reject);
        });
        request.write(body.payload.subarray(0, sent));
        return { answered, end: () => request.end(body.payload.subarray(sent)), cut: () => request.destroy() };
      };
      const holder = open(60);
      await new Promise((resolve) => setTimeout(resolve, 500)); // in the handler, holding the company's place
      const cut = open(60);
      cut.answered.catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300)); // waiting in the line
      cut.cut();
      await new Promise((resolve) => setTimeout(resolve, 100));
      holder.end();
      expect((await holder.answered).status).toBe(200);

      const next = open(body.payload.length);
      next.end();
      const started = Date.now();
      const answer = await next.answered;
      expect(answer.status, answer.text).toBe(200);
      expect(Date.now() - started).toBeLessThan(5_000);
      const listed = await call(gated.app, 'GET', `/api/v1/jobs/${a.job.uuid}/photos`, { key: a.key });
      expect(listed.body.data.photos).toHaveLength(2);
    } finally {
      await gated.close();
    }
  });
});

