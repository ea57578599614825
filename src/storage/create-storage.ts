import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { uploadDir, type Config } from '../config.js';
import { LocalStorage } from './local-storage.js';
import type { Storage } from './storage.js';
import { linkSigner } from './url-signer.js';

/** Local uploads go to UPLOAD_DIR (default DATA_DIR/uploads); an in-memory DATA_DIR gets a temporary directory. */
function localRoot(config: Config): string {
  if (!config.UPLOAD_DIR && config.DATA_DIR === 'memory://') {
    return path.join(tmpdir(), `crm-uploads-${process.pid}-${randomBytes(4).toString('hex')}`);
  }
  return uploadDir(config);
}

/** The storage driver chosen by STORAGE_DRIVER. */
export async function createStorage(config: Config): Promise<Storage> {
  if (config.STORAGE_DRIVER === 's3') {
    // Loaded only for the s3 driver: the AWS SDK is a large part of a process's memory.
    const { S3Storage } = await import('./s3-storage.js');
    return new S3Storage({
      bucket: config.S3_BUCKET as string,
      region: config.S3_REGION,
      endpoint: config.S3_ENDPOINT,
      publicEndpoint: config.S3_PUBLIC_ENDPOINT,
      forcePathStyle: config.S3_FORCE_PATH_STYLE,
    });
  }
  const storage = new LocalStorage(localRoot(config), linkSigner(config));
  // Partial files of uploads cut by a crash or a kill, swept once at start, in the background.
  storage.sweeping = storage.removeStalePartials().catch(() => 0);
  return storage;
}
