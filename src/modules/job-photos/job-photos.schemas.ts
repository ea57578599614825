import { z } from 'zod';
import { UserEmbed } from '../users/users.schemas.js';
import { timestampInput, timestampOutput, uuidString } from '../../shared/formats.js';
import { listQueryShape } from '../../shared/list-query.js';
import { PHOTO_TYPES } from '../../db/schema/index.js';

/** Multipart field names that carry files. */
export const FILE_FIELDS = ['photos', 'photo', 'file'] as const;

const photoType = z
  .enum(PHOTO_TYPES, { error: 'must be before, during or after' })
  .meta({ id: 'PhotoType', description: 'When in the job the photo was taken.' });

export const JobPhotosParams = z.strictObject({ job_uuid: uuidString.describe('The job id.') });
export type JobPhotosParams = z.infer<typeof JobPhotosParams>;

export const JobPhotoParams = z.strictObject({
  job_uuid: uuidString.describe('The job id.'),
  photo_uuid: uuidString.describe('The photo id.'),
});
export type JobPhotoParams = z.infer<typeof JobPhotoParams>;

export const ListJobPhotosQuery = z.strictObject({
  ...listQueryShape,
  photo_type: photoType.optional().describe('before, during or after.'),
});
export type ListJobPhotosQuery = z.infer<typeof ListJobPhotosQuery>;

/** The non-file fields of an upload, validated once all parts are read. */
export const UploadFields = z.strictObject({
  photo_type: photoType.default('during').describe('before, during or after; applies to every file of the request.'),
  taken_at: timestampInput.optional().describe('When the photos were taken: ISO 8601 with Z or an offset.'),
});
export type UploadFields = z.infer<typeof UploadFields>;

/**
 * The multipart/form-data body, for the document only: the route reads the stream part by part and checks
 * the text fields with UploadFields as they arrive, so this schema is not run against request.body.
 */
export const UploadPhotosForm = z.strictObject({
  photos: z
    .array(z.file())
    .min(1)
    .max(10)
    .describe('One or more image files (at most 10 a request, MAX_PHOTOS_PER_REQUEST) (JPEG, PNG, WebP, HEIC/HEIF or GIF); the field names `photo` and `file` are accepted too.'),
  ...UploadFields.shape,
});

export const PhotoUserEmbed = UserEmbed.meta({ id: 'PhotoUser' });

export const JobPhotoResponse = z
  .object({
    uuid: z.string(),
    job_uuid: z.string(),
    user_id: z.string().describe('The uploader: the user of the API key.'),
    photo_url: z.string().describe('Absolute, expiring URL of the file; works without the API key.'),
    photo_type: photoType,
    file_name: z.string().nullable().describe('Original file name, for display only.'),
    file_size: z.number().nullable().describe('Bytes.'),
    mime_type: z.string().nullable().describe('Detected from the bytes.').meta({ example: 'image/jpeg' }),
    taken_at: timestampOutput.nullable(),
    customer_email_sent: z.boolean(),
    created_at: timestampOutput,
    updated_at: timestampOutput,
    deleted_at: timestampOutput.nullable(),
    user: PhotoUserEmbed.nullable(),
  })
  .meta({ id: 'JobPhoto' });
export type JobPhotoResponse = z.infer<typeof JobPhotoResponse>;

/** An upload answers each photo as its GET does, in the order the files were sent. */
export const UploadResponse = z
  .object({ photos: z.array(JobPhotoResponse).describe('The created photos, each as GET /jobs/{job_uuid}/photos/{photo_uuid} answers it, in upload order.') })
  .meta({ id: 'UploadedPhotos' });
