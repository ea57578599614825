import type { JobPhotoWithUser } from './job-photos.repository.js';
import type { JobPhotoResponse } from './job-photos.schemas.js';

/**
 * A photo as the API answers it, given the link to its file (the storage key stays internal). The
 * field order is the JSON order (ETags hash it).
 */
export function toJobPhotoResponse({ photo, user }: JobPhotoWithUser, photoUrl: string): JobPhotoResponse {
  return {
    uuid: photo.uuid,
    job_uuid: photo.jobUuid,
    user_id: photo.userId,
    photo_type: photo.photoType,
    file_name: photo.fileName,
    file_size: photo.fileSize,
    mime_type: photo.mimeType,
    taken_at: photo.takenAt?.toISOString() ?? null,
    customer_email_sent: photo.customerEmailSent,
    created_at: photo.createdAt.toISOString(),
    updated_at: photo.updatedAt.toISOString(),
    deleted_at: photo.deletedAt?.toISOString() ?? null,
    photo_url: photoUrl,
    user: user && { id: user.id, first_name: user.firstName, last_name: user.lastName },
  };
}
