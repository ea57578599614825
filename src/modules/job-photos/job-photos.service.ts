import { Readable, Transform } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import { v7 as uuidv7 } from 'uuid';
import type { Db } from '../../db/client.js';
import { jobPhotos } from '../../db/schema/index.js';
import { invalidField, notFound } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { Page } from '../../shared/list-query.js';
import { PHOTO_EXTENSIONS, type LinkOptions, type Storage } from '../../storage/storage.js';
import { liveJobExists, lockJob } from '../jobs/jobs.repository.js';
import { recordChanges, registerRecordedType, type Changes } from '../events/change-recorder.js';
import { toJobPhotoResponse } from './job-photos.mapper.js';
import * as repository from './job-photos.repository.js';
import type { JobPhotoResponse, ListJobPhotosQuery, UploadedPhoto, UploadFields } from './job-photos.schemas.js';

/** What reading a photo needs besides the database: the storage and how to build its links. */
export interface PhotoLinks {
  storage: Storage;
  link: LinkOptions;
}

/** A file stream as the multipart parser gives it: `truncated` once it hit the size limit. */
export type UploadStream = Readable & { truncated?: boolean };

const ACCEPTED_TYPES = 'JPEG, PNG, WebP, HEIC/HEIF or GIF';

/** Photos of a deleted, missing or other company's job are 404, even with include_deleted=true. */
export async function requireLiveJob(db: Db, companyId: string, jobUuid: string): Promise<void> {
  if (!(await liveJobExists(db, companyId, jobUuid))) throw notFound('Job');
}

async function toPhotoRecord(found: repository.JobPhotoWithUser, links: PhotoLinks): Promise<JobPhotoResponse> {
  return toJobPhotoResponse(found, await links.storage.url(found.photo.storageKey, links.link));
}

export async function listPhotos(
  db: Db,
  companyId: string,
  jobUuid: string,
  query: ListJobPhotosQuery,
  links: PhotoLinks,
): Promise<Page<JobPhotoResponse>> {
  await requireLiveJob(db, companyId, jobUuid);
  const page = await repository.listPhotos(db, companyId, jobUuid, query);
  return { items: await Promise.all(page.items.map((item) => toPhotoRecord(item, links))), pagination: page.pagination };
}

export async function getPhoto(
  db: Db,
  companyId: string,
  jobUuid: string,
  uuid: string,
  includeDeleted: boolean,
  links: PhotoLinks,
): Promise<JobPhotoResponse> {
  await requireLiveJob(db, companyId, jobUuid);
  const found = await repository.findPhoto(db, companyId, jobUuid, uuid, includeDeleted);
  if (!found) throw notFound('Photo');
  return toPhotoRecord(found, links);
}

/** Soft delete (If-Match checked under the photo's lock); the stored file stays. */
export async function removePhoto(db: Db, actor: Actor, jobUuid: string, uuid: string, links: PhotoLinks): Promise<void> {
  await requireLiveJob(db, actor.companyId, jobUuid);
  await recordChanges(
    db,
    actor,
    async (changes) => {
      await changes.target<repository.JobPhotoRow>('job_photo', uuid, (row) => row.jobUuid === jobUuid);
      await repository.softDeletePhoto(changes.tx, actor.companyId, jobUuid, uuid);
    },
    { photoLinks: links },
  );
}

/** The client's file name for display only: no path, no control characters, at most 255 characters. */
export function displayFileName(name: string | undefined): string | null {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  return clean === '' ? null : clean;
}

interface StoredPhoto {
  uuid: string;
  storageKey: string;
  fileName: string | null;
  fileSize: number;
  mimeType: string;
}

/** Enough leading bytes for file-type to recognise every accepted format. */
const SAMPLE_BYTES = 4100;

/**
 * Reads the first bytes of a stream (fewer when it ends sooner) and returns them with a stream of the
 * whole content, so the type is decided before anything is stored and nothing beyond the sample is buffered.
 * It reads through the stream's async iterator, which settles on data, end, error and also on a stream
 * that was destroyed before this was called (a multipart part cut short): a wait here always ends.
 */
async function peek(source: Readable, size: number): Promise<{ head: Buffer; whole: Readable; drain(): void }> {
  const iterator = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let length = 0;
  let ended = false;
  while (length < size) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    chunks.push(next.value);
    length += next.value.length;
  }
  const head = Buffer.concat(chunks);
  async function* rest() {
    yield head;
    while (!ended) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  /** Reads and drops the rest, so the parser moves on to the next part. */
  const drain = () => {
    void (async () => {
      while (!ended) ended = (await iterator.next().catch(() => ({ done: true as const }))).done === true;
    })();
  };
  return { head, whole: Readable.from(rest(), { objectMode: false }), drain };
}

/** Counts the bytes passing through. */
function byteCounter(): Transform & { bytes: number } {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      counter.bytes += chunk.length;
      callback(null, chunk);
    },
  }) as Transform & { bytes: number };
  counter.bytes = 0;
  return counter;
}

/**
 * One upload request: files are streamed to storage as they arrive, then every record is inserted in
 * one transaction. On any failure `discard` removes what was stored, so nothing is left half-done.
 */
export class PhotoUpload {
  private readonly stored: StoredPhoto[] = [];

  constructor(
    private readonly db: Db,
    private readonly storage: Storage,
    private readonly actor: Actor,
    private readonly jobUuid: string,
    private readonly maxBytes: number,
    private readonly links: PhotoLinks,
  ) {}

  /** Detects the type from the first bytes and streams the file to a generated key. */
  async storeFile(file: UploadStream, clientName: string | undefined): Promise<void> {
    const { head, whole, drain } = await peek(file, SAMPLE_BYTES);
    const mimeType = (await fileTypeFromBuffer(head))?.mime;
    const extension = mimeType ? PHOTO_EXTENSIONS[mimeType] : undefined;
    if (!mimeType || !extension) {
      drain();
      throw invalidField('photos', `must be a ${ACCEPTED_TYPES} image (decided from the file's bytes)`);
    }
    const uuid = uuidv7();
    const storageKey = `${this.actor.companyId}/${this.jobUuid}/${uuid}.${extension}`;
    const counter = byteCounter();
    // The limit can be hit before storage.put has attached its listeners (local storage first awaits a
    // mkdir): the error stays on the destroyed stream and put's pipeline reports it, instead of an
    // 'error' event without a listener becoming an uncaught exception that takes the process down.
    counter.on('error', () => undefined);
    // Busboy stops at the size limit and emits 'limit': abort the write instead of keeping a cut file.
    file.once('limit', () => counter.destroy(this.tooLarge()));
    whole.once('error', (error) => counter.destroy(error));
    await this.storage.put(storageKey, whole.pipe(counter), { contentType: mimeType });
    this.stored.push({ uuid, storageKey, fileName: displayFileName(clientName), fileSize: counter.bytes, mimeType });
    if (file.truncated) throw this.tooLarge();
  }

  private tooLarge() {
    return invalidField('photos', `a file is larger than the limit of ${this.maxBytes} bytes`);
  }

  /** Inserts one record per stored file, in one transaction; the job must still be live. */
  async commit(fields: UploadFields): Promise<repository.JobPhotoRow[]> {
    if (this.stored.length === 0) throw invalidField('photos', 'at least one photo file is required');
    let rows: repository.JobPhotoRow[] = [];
    const record = async (changes: Changes) => {
      const { tx } = changes;
      if (!(await lockJob(tx, this.actor.companyId, this.jobUuid))) throw notFound('Job');
      rows = await repository.insertPhotos(
        tx,
        this.stored.map((photo) => ({
          ...photo,
          companyId: this.actor.companyId,
          jobUuid: this.jobUuid,
          userId: this.actor.userId,
          photoType: fields.photo_type,
          takenAt: fields.taken_at ?? null,
        })),
      );
      for (const row of rows) changes.created('job_photo', row.uuid);
    };
    await recordChanges(this.db, this.actor, record, { photoLinks: this.links });
    return rows;
  }

  /** Removes every file this upload stored; errors are ignored so the original failure is reported. */
  async discard(): Promise<void> {
    await Promise.allSettled(this.stored.map((photo) => this.storage.remove(photo.storageKey)));
    this.stored.length = 0;
  }
}

export async function toUploadedPhotos(rows: repository.JobPhotoRow[], links: PhotoLinks): Promise<UploadedPhoto[]> {
  return Promise.all(
    rows.map(async (row) => ({
      uuid: row.uuid,
      photo_url: await links.storage.url(row.storageKey, links.link),
      photo_type: row.photoType as UploadedPhoto['photo_type'],
      taken_at: row.takenAt ? row.takenAt.toISOString() : null,
      created_at: row.createdAt.toISOString(),
    })),
  );
}

registerRecordedType('job_photo', {
  table: jobPhotos,
  noun: 'Photo',
  embeds: ['user'],
  load: async (db, companyId, uuid, context) => {
    const found = await repository.findPhotoByUuid(db, companyId, uuid);
    if (!found || !context.photoLinks) throw new Error('A photo is recorded with its links');
    return toPhotoRecord(found, context.photoLinks as PhotoLinks);
  },
});
