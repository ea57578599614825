import multipart, { type MultipartValue } from '@fastify/multipart';
import type { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { AppError, invalidField } from '../../errors.js';
import { settleStreamedIdempotency } from '../../plugins/idempotency.js';
import { actorOf } from '../../auth/principal.js';
import { SECURITY } from '../../shared/crud-routes.js';
import { errorResponses, listSchema, MessageSchema, ok, okSchema } from '../../shared/envelope.js';
import { GetQuery } from '../../shared/list-query.js';
import { requestLinkBase } from '../../shared/urls.js';
import type { LinkOptions } from '../../storage/storage.js';
import {
  FILE_FIELDS,
  JobPhotoParams,
  JobPhotoResponse,
  JobPhotosParams,
  ListJobPhotosQuery,
  UploadFields,
  UploadPhotosForm,
  UploadResponse,
} from './job-photos.schemas.js';
import * as service from './job-photos.service.js';

const TAG = 'Job photos';
const config = { addon: 'photos' as const };
/** Non-file fields are tiny; these limits keep a request from holding memory with them. */
const FIELD_LIMITS = { fields: 10, fieldSize: 1024, fieldNameSize: 100, headerPairs: 100 };

const UPLOAD_DESCRIPTION =
  'multipart/form-data. Files in `photos` (one or more; `photo` and `file` are accepted too), `photo_type` ' +
  '(before | during | after, default during, applies to every file) and `taken_at` (ISO 8601 with Z or an offset). ' +
  'The type is decided from the bytes: JPEG, PNG, WebP, HEIC/HEIF or GIF; at most MAX_PHOTO_BYTES (default 10 MiB) per ' +
  'file and MAX_PHOTOS_PER_REQUEST (default 10) files. Any invalid file fails the whole request and stores nothing.';

/** zod for params; the upload body is the multipart stream, read part by part, so its schema documents the form only. */
const zodExceptBody: FastifySchemaCompiler<unknown> = (route) =>
  route.httpPart === 'body' ? () => true : validatorCompiler(route as Parameters<typeof validatorCompiler>[0]);

/** The non-file fields seen so far, checked as each arrives so a bad photo_type fails before more files stream. */
function acceptField(fields: Record<string, string>, part: MultipartValue): UploadFields {
  if (!(part.fieldname in UploadFields.shape)) throw invalidField(part.fieldname, 'is not an accepted field');
  if (part.valueTruncated) throw invalidField(part.fieldname, 'is too long');
  fields[part.fieldname] = String(part.value);
  return parseFields(fields);
}

function parseFields(fields: Record<string, string>): UploadFields {
  const parsed = UploadFields.safeParse(fields);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((issue) => ({ field: issue.path.join('.') || 'body', message: issue.message }));
  throw new AppError('validation_error', `Invalid upload: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details);
}

/**
 * Bounds the reading of an upload: when UPLOAD_TIMEOUT_MS has passed since the handler started, the file
 * being read is cut and the request is answered 400 (connection closed), whatever the client still does.
 * `afterwards` runs once the cut reading has settled, to remove what it stored meanwhile.
 */
async function withUploadDeadline<T>(
  ms: number,
  reply: FastifyReply,
  work: (track: (file: Readable) => void) => Promise<T>,
  afterwards: () => Promise<void>,
): Promise<T> {
  const expiredError = new AppError('validation_error', `The upload did not complete within ${ms / 1000} s.`);
  let current: Readable | undefined;
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  const track = (file: Readable) => {
    if (expired) throw expiredError;
    current = file;
  };
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      expired = true;
      current?.destroy(expiredError);
      reject(expiredError);
    }, ms);
  });
  const running = work(track);
  try {
    return await Promise.race([running, deadline]);
  } catch (error) {
    if (expired) {
      reply.header('connection', 'close');
      void running.catch(() => undefined).then(afterwards);
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

export const jobPhotoRoutes: FastifyPluginAsync = async (parent) => {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const { config: env } = app.deps;
  await app.register(multipart, {
    limits: {
      ...FIELD_LIMITS,
      fileSize: env.MAX_PHOTO_BYTES,
      files: env.MAX_PHOTOS_PER_REQUEST,
      parts: env.MAX_PHOTOS_PER_REQUEST + FIELD_LIMITS.fields,
    },
  });

  const db = () => app.deps.database.db;
  const links = (request: FastifyRequest): service.PhotoLinks => ({ storage: app.deps.storage, link: linkOptions(request) });
  const linkOptions = (request: FastifyRequest): LinkOptions => ({
    baseUrl: requestLinkBase(request, env.PUBLIC_BASE_URL),
    ttlSeconds: env.PHOTO_URL_TTL_SECONDS,
  });

  app.get(
    '/jobs/:job_uuid/photos',
    {
      config,
      schema: {
        tags: [TAG],
        operationId: 'listJobPhotos',
        summary: 'List the photos of a job',
        description: 'Newest first; photo_type filters. 404 when the job is missing or deleted (even with include_deleted=true).',
        security: SECURITY,
        params: JobPhotosParams,
        querystring: ListJobPhotosQuery,
        response: { 200: listSchema('photos', JobPhotoResponse), ...errorResponses(404) },
      },
    },
    async (request) => {
      const page = await service.listPhotos(db(), request.principal.companyId, request.params.job_uuid, request.query, links(request));
      return ok({ photos: page.items, pagination: page.pagination });
    },
  );

  app.get(
    '/jobs/:job_uuid/photos/:photo_uuid',
    {
      config: { ...config, etag: true },
      schema: {
        tags: [TAG],
        operationId: 'getJobPhoto',
        summary: 'Get a photo of a job',
        description: 'A soft-deleted photo is 404 unless include_deleted=true; a deleted job is always 404.',
        security: SECURITY,
        params: JobPhotoParams,
        querystring: GetQuery,
        response: { 200: okSchema(JobPhotoResponse), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { job_uuid, photo_uuid } = request.params;
      const photo = await service.getPhoto(
        db(),
        request.principal.companyId,
        job_uuid,
        photo_uuid,
        request.query.include_deleted,
        links(request),
      );
      return ok(photo);
    },
  );

  app.post(
    '/jobs/:job_uuid/photos',
    {
      config,
      schema: {
        tags: [TAG],
        operationId: 'uploadJobPhotos',
        summary: 'Upload photos to a job',
        description: UPLOAD_DESCRIPTION,
        security: SECURITY,
        consumes: ['multipart/form-data'],
        params: JobPhotosParams,
        body: UploadPhotosForm,
        response: { 200: okSchema(UploadResponse), ...errorResponses(404, 409, 413) },
      },
      validatorCompiler: zodExceptBody,
    },
    async (request, reply) => {
      if (!request.isMultipart()) throw new AppError('validation_error', 'Send the photos as multipart/form-data.');
      const { job_uuid } = request.params;
      const upload = new service.PhotoUpload(db(), app.deps.storage, actorOf(request), job_uuid, env.MAX_PHOTO_BYTES, links(request));
      try {
        const fields = await withUploadDeadline(
          env.UPLOAD_TIMEOUT_MS,
          reply,
          async (track) => {
            await service.requireLiveJob(db(), request.principal.companyId, job_uuid);
            const fieldValues: Record<string, string> = {};
            let parsed = parseFields(fieldValues);
            for await (const part of request.parts()) {
              if (part.type === 'file') {
                track(part.file);
                if (!(FILE_FIELDS as readonly string[]).includes(part.fieldname)) {
                  throw invalidField(part.fieldname, 'is not an accepted field; send files as photos');
                }
                await upload.storeFile(part.file, part.filename);
              } else {
                parsed = acceptField(fieldValues, part);
              }
            }
            return parsed;
          },
          () => upload.discard(),
        );
        // A retry under an Idempotency-Key is recognised by the bytes just read: its first answer is sent
        // and the files staged for this one are removed.
        if (await settleStreamedIdempotency(db(), request, reply)) {
          await upload.discard();
          return reply;
        }
        const rows = await upload.commit(fields);
        return ok({ photos: await service.toUploadedPhotos(rows, links(request)) });
      } catch (error) {
        await upload.discard();
        throw error;
      }
    },
  );

  app.delete(
    '/jobs/:job_uuid/photos/:photo_uuid',
    {
      config,
      schema: {
        tags: [TAG],
        operationId: 'deleteJobPhoto',
        summary: 'Delete a photo (soft)',
        description: 'Sets deleted_at; the stored file stays.',
        security: SECURITY,
        params: JobPhotoParams,
        response: { 200: MessageSchema, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { job_uuid, photo_uuid } = request.params;
      await service.removePhoto(db(), actorOf(request), job_uuid, photo_uuid, links(request));
      return ok({ message: 'Photo deleted successfully' });
    },
  );
};
