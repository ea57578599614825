import type { FastifyInstance } from 'fastify';
import { call } from './app.js';
import { createVia, makeCustomer } from './factories.js';

/** A job through the API; makes a customer when none is given. */
export async function makeJob(app: FastifyInstance, key: string, overrides: Record<string, unknown> = {}) {
  const customerUuid = overrides.customer_uuid ?? (await makeCustomer(app, key)).uuid;
  return createVia(app, key, '/jobs', { title: 'Fix the sink', ...overrides, customer_uuid: customerUuid });
}

/** Real, tiny images: a 1x1 PNG, a 1x1 JPEG and a 1x1 GIF. */
export const PNG_BYTES = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
export const JPEG_BYTES = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////' +
    'wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=',
  'base64',
);
export const GIF_BYTES = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

export interface UploadPart {
  field?: string;
  name: string;
  bytes: Buffer;
  type?: string;
}

/** A multipart/form-data body built by the platform's FormData, so the encoding is a real client's. */
export async function multipartBody(files: UploadPart[], fields: Record<string, string> = {}) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const file of files) {
    form.append(file.field ?? 'photos', new Blob([file.bytes], { type: file.type ?? 'application/octet-stream' }), file.name);
  }
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return {
    payload: Buffer.from(await request.arrayBuffer()),
    contentType: request.headers.get('content-type') as string,
  };
}

/** POSTs files (and fields) to a job's photos; returns status and parsed body. */
export async function uploadPhotos(
  app: FastifyInstance,
  key: string,
  jobUuid: string,
  files: UploadPart[],
  fields: Record<string, string> = {},
) {
  const { payload, contentType } = await multipartBody(files, fields);
  const response = await app.inject({
    method: 'POST',
    url: `/api/v1/jobs/${jobUuid}/photos`,
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    payload,
  });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

/** The path and query of an absolute photo_url, to request it with inject. */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

export { call };
