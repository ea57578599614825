import type { Readable } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import { newRecordId } from '../../shared/ids.js';
import type { Db } from '../../db/client.js';
import { jobPhotos } from '../../db/schema/index.js';
import { AppError, invalidField, notFound } from '../../errors.js';
import type { Actor } from '../../auth/principal.js';
import type { Page } from '../../shared/list-query.js';
import { UUID_PATTERN } from '../../shared/formats.js';
import { parseOrThrow } from '../../shared/validation.js';
import { PHOTO_EXTENSIONS, type LinkOptions, type Storage } from '../../storage/storage.js';
import { byteCounter, peek } from '../../storage/streams.js';
import { liveJobExists, lockJob } from '../jobs/jobs.repository.js';
import { recordChanges, type Changes, type RecordedType } from '../changes/change-recorder.js';
import { toJobPhotoResponse } from './job-photos.mapper.js';
import * as repository from './job-photos.repository.js';
import {
  FILE_FIELDS,
  UploadFields,
  type JobPhotoResponse,
  type ListJobPhotosQuery,
} from './job-photos.schemas.js';

/** What reading a photo needs besides the database: the storage and how to build its links. */
export interface PhotoLinks {
  storage: Storage;
  link: LinkOptions;
}

/** A file stream as the multipart parser gives it: `truncated` once it hit the size limit, then 'limit' emitted. */
export type UploadStream = Readable & { truncated?: boolean };

/** One part of a multipart upload, in the order the client sent them. */
export type UploadPart =
  | { type: 'file'; fieldname: string; filename: string | undefined; stream: UploadStream }
  | { type: 'field'; fieldname: string; value: string; valueTruncated: boolean };

export interface UploadOptions {
  /** MAX_PHOTO_BYTES: the parser cuts a file there; this names the limit in the error. */
  maxPhotoBytes: number;
  /** UPLOAD_TIMEOUT_MS: reading every part must end within it. */
  uploadTimeoutMs: number;
  links: PhotoLinks;
  /**
   * Runs once every byte is read, before the commit. True means the request was answered already (a retry
   * under the same Idempotency-Key): nothing is committed, and `discardStaged` removed what was stored
   * before that answer went out.
   */
  beforeCommit: (discardStaged: () => Promise<void>) => Promise<boolean>;
  /** Runs when the upload is cut (past the deadline, or by `signal`), before its error is thrown. */
  onCut?: () => void;
  /**
   * Ends the upload early (the client went away, the server shuts down): the file being read is cut, what
   * was stored is removed, and the upload fails with the signal's reason.
   */
  signal?: AbortSignal;
}

const ACCEPTED_TYPES = 'JPEG, PNG, WebP, HEIC/HEIF or GIF';

/** Photos of a deleted, missing or other company's job are 404, even with include_deleted=true. */
async function requireLiveJob(db: Db, companyId: string, jobUuid: string): Promise<void> {
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
  if (!found) throw notFound(jobPhotoRecords.noun);
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
 * One upload request: files are streamed to storage as they arrive, then every record is inserted in
 * one transaction. On any failure `discard` removes what was stored, so nothing is left half-done.
 */
class PhotoUpload {
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
      throw invalidField('photos', `must be a ${ACCEPTED_TYPES} image (decided from the file's bytes)`, 'invalid_format');
    }
    const uuid = newRecordId();
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
    return invalidField('photos', `has a file larger than the limit of ${this.maxBytes} bytes`, 'out_of_range');
  }

  /**
   * Inserts one record per stored file, in one transaction; the job must still be live. Answers each record
   * as its GET does, in upload order, built by the mapper from the inserted rows (not read back); their
   * created events carry the same records. A keyed request's key is completed with the answer in that
   * transaction.
   */
  async commit(fields: UploadFields): Promise<JobPhotoResponse[]> {
    if (this.stored.length === 0) throw invalidField('photos', 'is required: send at least one photo file', 'required');
    const record = async (changes: Changes) => {
      const { tx } = changes;
      if (!(await lockJob(tx, this.actor.companyId, this.jobUuid))) throw notFound('Job');
      const rows = await repository.insertPhotos(
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
      const uploader = await repository.findUploader(tx, this.actor.companyId, this.actor.userId);
      // In the order the files were sent: RETURNING's row order is not promised.
      const byUuid = new Map(rows.map((row) => [row.uuid, row]));
      const records = await Promise.all(
        this.stored.map((photo) => toPhotoRecord({ photo: byUuid.get(photo.uuid)!, user: uploader }, this.links)),
      );
      for (const record of records) changes.created('job_photo', record.uuid, record);
      return changes.answerWith(records);
    };
    return recordChanges(this.db, this.actor, record, { photoLinks: this.links });
  }

  /**
   * Whether the records of this upload were not committed, once any transaction writing them has ended (it
   * holds their job's lock): false when they were, or when the database cannot say.
   */
  async nothingCommitted(): Promise<boolean> {
    const uuids = this.stored.map((photo) => photo.uuid);
    try {
      return !(await repository.anyPhotoCommitted(this.db, this.actor.companyId, this.jobUuid, uuids));
    } catch {
      return false;
    }
  }

  /** Removes every file this upload stored; errors are ignored so the original failure is reported. */
  async discard(): Promise<void> {
    await Promise.allSettled(this.stored.map((photo) => this.storage.remove(photo.storageKey)));
    this.stored.length = 0;
  }
}

/** The non-file fields seen so far, checked as each arrives so a bad photo_type fails before more files stream. */
function acceptField(fields: Record<string, string>, part: Extract<UploadPart, { type: 'field' }>): UploadFields {
  // A file field sent as a plain part (no filename in its Content-Disposition) is a file that is not one.
  if ((FILE_FIELDS as readonly string[]).includes(part.fieldname)) {
    throw invalidField(part.fieldname, 'must be a file: a part with a filename in its Content-Disposition', 'invalid_type');
  }
  if (!(part.fieldname in UploadFields.shape)) throw invalidField(part.fieldname, 'is not an accepted field', 'unknown_field');
  if (part.valueTruncated) throw invalidField(part.fieldname, 'is too long', 'out_of_range');
  // Sent twice, it would say two things of the same photos: neither is picked in silence.
  if (Object.hasOwn(fields, part.fieldname)) throw invalidField(part.fieldname, 'is sent more than once; send it once', 'invalid');
  fields[part.fieldname] = part.value;
  return parseFields(fields);
}

function parseFields(fields: Record<string, string>): UploadFields {
  return parseOrThrow(UploadFields, fields, 'upload');
}

/** How long the answer to a cut upload waits for its reading to settle and its files to be removed. */
const CUT_CLEANUP_WAIT_MS = 2_000;

/**
 * Bounds the reading of an upload: when `ms` has passed since it started, or when `signal` aborts, the
 * file being read is cut and the upload fails (400 past the deadline, the signal's reason otherwise),
 * whatever the client still does. `afterwards` runs once the cut reading has settled, to remove what it
 * stored meanwhile (a partial file is removed by the storage as its write fails).
 */
async function withUploadBounds<T>(
  ms: number,
  signal: AbortSignal | undefined,
  onCut: (() => void) | undefined,
  work: (track: (file: Readable) => void) => Promise<T>,
  afterwards: () => Promise<void>,
): Promise<T> {
  const expiredError = new AppError('validation_error', `The upload did not complete within ${ms / 1000} s.`);
  let current: Readable | undefined;
  let cutBy: unknown;
  let timer: NodeJS.Timeout | undefined;
  const track = (file: Readable) => {
    if (cutBy !== undefined) throw cutBy;
    current = file;
  };
  let onAbort: (() => void) | undefined;
  const bounds = new Promise<never>((_resolve, reject) => {
    const cut = (reason: unknown) => {
      if (cutBy !== undefined) return;
      cutBy = reason;
      onCut?.();
      current?.destroy(reason instanceof Error ? reason : new Error(String(reason)));
      reject(reason);
    };
    timer = setTimeout(() => cut(expiredError), ms);
    onAbort = () => cut(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
  const running = work(track);
  try {
    return await Promise.race([running, bounds]);
  } catch (error) {
    if (cutBy !== undefined) {
      // The answer waits for the cut reading to settle (its partial file removed) and for what it stored to
      // go, so a server stopping right after the answer leaves no file behind; a reading still waiting on a
      // slow client for its next part (it stores nothing meanwhile) is left to finish on its own.
      const cleaned = running.catch(() => undefined).then(afterwards).catch(() => undefined);
      await Promise.race([cleaned, new Promise((resolve) => setTimeout(resolve, CUT_CLEANUP_WAIT_MS).unref())]);
    }
    throw error;
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/** Streams every file part to storage and returns the checked fields. */
async function readParts(
  db: Db,
  upload: PhotoUpload,
  companyId: string,
  jobUuid: string,
  parts: AsyncIterable<UploadPart>,
  track: (file: Readable) => void,
): Promise<UploadFields> {
  await requireLiveJob(db, companyId, jobUuid);
  const fieldValues: Record<string, string> = {};
  let parsed = parseFields(fieldValues);
  for await (const part of parts) {
    if (part.type === 'file') {
      track(part.stream);
      if (!(FILE_FIELDS as readonly string[]).includes(part.fieldname)) {
        throw invalidField(part.fieldname, 'is not an accepted field; send files as photos', 'unknown_field');
      }
      await upload.storeFile(part.stream, part.filename);
    } else {
      parsed = acceptField(fieldValues, part);
    }
  }
  return parsed;
}

/**
 * Uploads the files of one request to a live job: nothing is committed unless every part is valid and
 * read within the deadline, and every failure removes what was stored. Null when `beforeCommit` reported
 * the request answered already.
 */
export async function uploadPhotos(
  db: Db,
  storage: Storage,
  actor: Actor,
  jobUuid: string,
  parts: AsyncIterable<UploadPart>,
  options: UploadOptions,
): Promise<JobPhotoResponse[] | null> {
  const upload = new PhotoUpload(db, storage, actor, jobUuid, options.maxPhotoBytes, options.links);
  let fields: UploadFields;
  try {
    fields = await withUploadBounds(
      options.uploadTimeoutMs,
      options.signal,
      options.onCut,
      (track) => readParts(db, upload, actor.companyId, jobUuid, parts, track),
      () => upload.discard(),
    );
    if (await options.beforeCommit(() => upload.discard())) {
      await upload.discard();
      return null;
    }
  } catch (error) {
    await upload.discard();
    throw error;
  }
  try {
    // Once committed, the stored files belong to their records and are never discarded.
    return await upload.commit(fields);
  } catch (error) {
    // A refusal in the transaction rolled it back, as did losing the key to a concurrent request
    // (KeyTakenError: that request's answer is the replay): the staged files go. Another failure may be
    // the connection lost at COMMIT, whose outcome is unknown: the files stay if the records exist.
    if (error instanceof AppError || (await upload.nothingCommitted())) await upload.discard();
    throw error;
  }
}

/** Keys checked against the database at a time by the orphan sweep. */
const SWEEP_BATCH = 500;

/**
 * Removes the photo files written before `before` that no photo row names (a deleted photo's row keeps its
 * file; a company this database does not know keeps all of its files): what an upload leaves when its
 * process dies between storing its files and committing their rows, or when the database stays unreachable
 * after a failed commit so the upload cannot tell whether its rows were written. `before` must be older than any upload still in progress. Answers how many files it removed.
 */
export async function removeOrphanFiles(db: Db, storage: Storage, before: Date, signal?: AbortSignal): Promise<number> {
  let removed = 0;
  let batch: Array<{ key: string; companyId: string; uuid: string }> = [];
  const sweep = async () => {
    const orphans = await repository.orphanPhotoFiles(db, batch);
    for (const file of batch) {
      if (!orphans.has(`${file.companyId}/${file.uuid}`)) continue;
      await storage.remove(file.key);
      removed++;
    }
    batch = [];
  };
  for await (const key of storage.keysWrittenBefore(before)) {
    // Keys are <company>/<job>/<photo uuid>.<extension> (isStorageKey).
    const [companyId, , file] = key.split('/');
    const uuid = file.slice(0, file.indexOf('.'));
    // A stray file whose name only looks like a key is not ours to judge (nor to break the batch's uuid cast).
    if (!UUID_PATTERN.test(companyId) || !UUID_PATTERN.test(uuid)) continue;
    batch.push({ key, companyId, uuid });
    if (batch.length >= SWEEP_BATCH) await sweep();
    // A closing app stops between batches; the next start sweeps again.
    if (signal?.aborted) return removed;
  }
  if (batch.length > 0) await sweep();
  return removed;
}

declare module '../changes/change-recorder.js' {
  interface RecordedObjects {
    job_photo: JobPhotoResponse;
  }
}

/** How the change recorder reads a photo, whichever its job (listed in events/recorded-types.ts). */
export const jobPhotoRecords: RecordedType<JobPhotoResponse> = {
  table: jobPhotos,
  noun: 'Photo',
  embeds: ['user'],
  async find(db, companyId, uuid, includeDeleted, context) {
    if (!context.photoLinks) throw new Error('A photo is recorded with its links');
    const found = await repository.findPhotoByUuid(db, companyId, uuid, includeDeleted);
    return found && toPhotoRecord(found, context.photoLinks as PhotoLinks);
  },
};
