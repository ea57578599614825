import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, paginateListObjectsV2, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Readable } from 'node:stream';
import { isStorageKey, linkWindow, type LinkOptions, type Storage, type StoredFile } from './storage.js';

/** The longest lifetime S3 accepts for a presigned URL (SigV4: 7 days). */
const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;

export interface S3StorageOptions {
  bucket: string;
  region: string;
  endpoint?: string;
  /**
   * The endpoint presigned links name, when clients reach the storage at another address than the API does
   * (the API on a container network, clients on the host). A link is signed for the host it names.
   */
  publicEndpoint?: string;
  forcePathStyle?: boolean;
  /** Defaults to the standard AWS credential chain (environment, profile, instance role). */
  credentials?: S3ClientConfig['credentials'];
}

/** Files in an S3 (or S3-compatible) bucket; links are presigned GET URLs. */
export class S3Storage implements Storage {
  readonly driver = 's3' as const;
  readonly client: S3Client;
  /** Signs links only (presigning sends nothing); the same client unless a public endpoint is set. */
  private readonly signer: S3Client;
  private readonly bucket: string;

  constructor(options: S3StorageOptions) {
    this.bucket = options.bucket;
    const settings = { region: options.region, forcePathStyle: options.forcePathStyle, credentials: options.credentials };
    this.client = new S3Client({ ...settings, endpoint: options.endpoint });
    this.signer = options.publicEndpoint ? new S3Client({ ...settings, endpoint: options.publicEndpoint }) : this.client;
  }

  async put(key: string, body: Readable, meta: { contentType: string }): Promise<void> {
    // The length is unknown while streaming: Upload sends parts (a single PUT for small files) and
    // aborts the multipart upload when the stream fails, so nothing is left behind.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: meta.contentType },
    });
    await upload.done();
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async *keysWrittenBefore(before: Date): AsyncIterable<string> {
    for await (const page of paginateListObjectsV2({ client: this.client }, { Bucket: this.bucket })) {
      for (const object of page.Contents ?? []) {
        if (object.Key && isStorageKey(object.Key) && object.LastModified && object.LastModified < before) yield object.Key;
      }
    }
  }

  async read(key: string): Promise<StoredFile | null> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return { stream: object.Body as Readable, size: object.ContentLength ?? 0 };
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return null;
      throw error;
    }
  }

  async url(key: string, options: LinkOptions): Promise<string> {
    // Signed as of the start of the current window, so the URL is the same throughout it (with the same credentials).
    const { signedAt, expiresAt } = linkWindow(options.ttlSeconds, Date.now(), MAX_PRESIGNED_SECONDS);
    return getSignedUrl(this.signer, new GetObjectCommand({ Bucket: this.bucket, Key: key }), {
      signingDate: new Date(signedAt * 1000),
      expiresIn: expiresAt - signedAt,
    });
  }

  destroy(): void {
    this.client.destroy();
    if (this.signer !== this.client) this.signer.destroy();
  }
}
