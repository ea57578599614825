import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isStorageKey, type LinkOptions, type Storage, type StoredFile } from './storage.js';
import type { UrlSigner } from './url-signer.js';

/** The path files are served at by the API; signed links point here. */
export const LOCAL_FILES_PATH = '/files';

/** Files on the local disk under one root directory, served by the API through signed, expiring links. */
export class LocalStorage implements Storage {
  readonly driver = 'local' as const;
  readonly root: string;

  constructor(root: string, readonly signer: UrlSigner) {
    this.root = path.resolve(root);
  }

  /** The file path of a generated key; anything else (traversal, odd characters) is refused. */
  private pathOf(key: string): string {
    if (!isStorageKey(key)) throw new Error('invalid storage key');
    const resolved = path.resolve(this.root, key);
    if (!resolved.startsWith(this.root + path.sep)) throw new Error('invalid storage key');
    return resolved;
  }

  async put(key: string, body: Readable, _meta: { contentType: string }): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    // Written under a temporary name and renamed, so a failed stream never leaves a partial file at the key.
    const partial = `${target}.${randomBytes(6).toString('hex')}.partial`;
    try {
      await pipeline(body, createWriteStream(partial, { flags: 'wx' }));
      await rename(partial, target);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async read(key: string): Promise<StoredFile | null> {
    if (!isStorageKey(key)) return null;
    const file = this.pathOf(key);
    try {
      const info = await stat(file);
      if (!info.isFile()) return null;
      return { stream: createReadStream(file), size: info.size };
    } catch {
      return null;
    }
  }

  async url(key: string, options: LinkOptions): Promise<string> {
    const { expires, signature } = this.signer.link(key, options.ttlSeconds);
    return `${options.baseUrl}${LOCAL_FILES_PATH}/${key}?expires=${expires}&signature=${signature}`;
  }
}
