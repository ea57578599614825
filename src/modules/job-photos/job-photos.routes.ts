import multipart from '@fastify/multipart';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { validatorCompiler } from '../../plugins/errors.js';
import { AppError } from '../../errors.js';
import { actorOf, type Actor } from '../../auth/principal.js';
import { CompanyLines } from '../../shared/company-lines.js';
import { SECURITY } from '../../shared/openapi.js';
import { errorResponses, listSchema, MessageSchema, ok, okSchema } from '../../shared/envelope.js';
import { GetQuery } from '../../shared/list-query.js';
import { requestLinkBase } from '../../shared/urls.js';
import type { LinkOptions } from '../../storage/storage.js';
import {
  JobPhotoParams,
  JobPhotoResponse,
  JobPhotosParams,
  ListJobPhotosQuery,
  UploadPhotosForm,
  UploadResponse,
} from './job-photos.schemas.js';
import * as service from './job-photos.service.js';

const TAG = 'Job photos';
const readConfig = { scope: 'job_photos:read', addon: 'photos' } as const;
const writeConfig = { scope: 'job_photos:write', addon: 'photos' } as const;
/** Non-file fields are tiny; these limits keep a request from holding memory with them. */
const FIELD_LIMITS = { fields: 10, fieldSize: 1024, fieldNameSize: 100, headerPairs: 100 };

const UPLOAD_DESCRIPTION =
  'multipart/form-data. Files in `photos` (one or more; `photo` and `file` are accepted too), `photo_type` ' +
  '(before | during | after, default during, applies to every file) and `taken_at` (ISO 8601 with Z or an offset). ' +
  'The type is decided from the bytes: JPEG, PNG, WebP, HEIC/HEIF or GIF; at most MAX_PHOTO_BYTES (default 10 MiB) per ' +
  'file and MAX_PHOTOS_PER_REQUEST (default 10) files. Any invalid file fails the whole request and stores nothing. ' +
  "A company's uploads beyond UPLOADS_PER_COMPANY (default 4) at once wait, unread, for its earlier ones to end.";

/** zod for params; the upload body is the multipart stream, read part by part, so its schema documents the form only. */
const zodExceptBody: FastifySchemaCompiler<unknown> = (route) =>
  route.httpPart === 'body' ? () => true : validatorCompiler(route as Parameters<typeof validatorCompiler>[0]);

/** The multipart parts as the service reads them; lazy, so parsing starts when the service first reads. */
async function* uploadParts(request: FastifyRequest): AsyncGenerator<service.UploadPart> {
  for await (const part of request.parts()) {
    yield part.type === 'file'
      ? { type: 'file', fieldname: part.fieldname, filename: part.filename, stream: part.file }
      : { type: 'field', fieldname: part.fieldname, value: String(part.value), valueTruncated: part.valueTruncated };
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

  // A shutdown cuts the uploads in progress, so their partial files are removed before the process exits
  // instead of the server waiting for a slow client until it is killed.
  const shutdown = new AbortController();
  app.addHook('preClose', async () => {
    shutdown.abort(new AppError('service_unavailable', 'The server is shutting down; send the upload again.'));
  });

  // A company's uploads beyond UPLOADS_PER_COMPANY wait before their bodies are read (DECISIONS §11).
  const uploads = new CompanyLines(env.UPLOADS_PER_COMPANY);

  const db = () => app.deps.database.db;
  const links = (request: FastifyRequest): service.PhotoLinks => ({ storage: app.deps.storage, link: linkOptions(request) });
  const linkOptions = (request: FastifyRequest): LinkOptions => ({
    baseUrl: requestLinkBase(request, env.PUBLIC_BASE_URL),
    ttlSeconds: env.PHOTO_URL_TTL_SECONDS,
  });

  app.get(
    '/jobs/:job_uuid/photos',
    {
      config: readConfig,
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
      config: { ...readConfig, etag: true },
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

  /** One upload request, its parts read and stored as they arrive. */
  async function upload(request: FastifyRequest, reply: FastifyReply, actor: Actor, jobUuid: string) {
    const photos = await service.uploadPhotos(
      db(),
      app.deps.storage,
      actor,
      jobUuid,
      uploadParts(request),
      {
        maxPhotoBytes: env.MAX_PHOTO_BYTES,
        uploadTimeoutMs: env.UPLOAD_TIMEOUT_MS,
        links: links(request),
        // A retry is recognised by the bytes just read: its first answer is sent instead. Otherwise the key,
        // known only now, is completed in the transaction of the photos' records.
        beforeCommit: async (discardStaged) => {
          if (await request.settleStreamedIdempotency(reply, discardStaged)) return true;
          if (request.keyedWrite) actor.idempotency = request.keyedWrite;
          return false;
        },
        // The client may still be sending: the answer closes the connection instead of reading the rest.
        onCut: () => reply.header('connection', 'close'),
        signal: shutdown.signal,
      },
    );
    return photos === null ? reply : ok({ photos });
  }

  app.post(
    '/jobs/:job_uuid/photos',
    {
      config: { ...writeConfig, idempotency: 'atomic' },
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
      const actor = actorOf(request);
      // A client that goes away while its upload waits gives up its turn (the answer cannot reach it).
      const gone = new AbortController();
      const onClose = () => gone.abort();
      request.raw.once('close', onClose);
      const entered = await uploads.enter(actor.companyId, gone.signal);
      request.raw.off('close', onClose);
      if (!entered) throw new AppError('validation_error', 'The request body was not received in full.');
      try {
        return await upload(request, reply, actor, request.params.job_uuid);
      } finally {
        uploads.leave(actor.companyId);
      }
    },
  );

  app.delete(
    '/jobs/:job_uuid/photos/:photo_uuid',
    {
      config: writeConfig,
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
