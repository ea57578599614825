import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, opendir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isStorageKey, type LinkOptions, type Storage, type StoredFile } from './storage.js';
import type { UrlSigner } from './url-signer.js';

/** The path files are served at by the API; signed links point here. */
export const LOCAL_FILES_PATH = '/files';

/** How old a temporary upload file must be before the start-up sweep takes it for one a dead process left. */
export const STALE_PARTIAL_MS = 3600_000;

const PARTIAL_SUFFIX = '.partial';

/** The entries of a directory one by one (none when it is missing), so a large tree is never listed whole. */
async function* entriesOf(dir: string) {
  let handle;
  try {
    handle = await opendir(dir);
  } catch {
    return;
  }
  for await (const entry of handle) yield entry;
}

/** Files on the local disk under one root directory, served by the API through signed, expiring links. */
export class LocalStorage implements Storage {
  readonly driver = 'local' as const;
  readonly root: string;
  /** The start-up sweep of stale partial files, once started (createStorage starts it). */
  sweeping?: Promise<number>;

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
    const partial = `${target}.${randomBytes(6).toString('hex')}${PARTIAL_SUFFIX}`;
    try {
      await pipeline(body, createWriteStream(partial, { flags: 'wx' }));
      await rename(partial, target);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  /**
   * Every file under the root with its key-shaped name (<company>/<job>/<file>: the walk goes two folders
   * deep) and when it was last written, one at a time.
   */
  private async *files(): AsyncIterable<{ name: string; key: string; full: string; writtenMs: number }> {
    for await (const company of entriesOf(this.root)) {
      if (!company.isDirectory()) continue;
      for await (const job of entriesOf(path.join(this.root, company.name))) {
        if (!job.isDirectory()) continue;
        const folder = path.join(this.root, company.name, job.name);
        for await (const file of entriesOf(folder)) {
          if (!file.isFile()) continue;
          const full = path.join(folder, file.name);
          const info = await stat(full).catch(() => null);
          if (info) yield { name: file.name, key: `${company.name}/${job.name}/${file.name}`, full, writtenMs: info.mtimeMs };
        }
      }
    }
  }

  /**
   * Removes the temporary files of uploads older than `olderThanMs`: a failed upload removes its own, so
   * these are what a process killed mid-upload left. Answers how many it removed.
   */
  async removeStalePartials(olderThanMs = STALE_PARTIAL_MS, now = Date.now()): Promise<number> {
    let removed = 0;
    for await (const file of this.files()) {
      if (!file.name.endsWith(PARTIAL_SUFFIX) || now - file.writtenMs <= olderThanMs) continue;
      await rm(file.full, { force: true });
      removed++;
    }
    return removed;
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async *keysWrittenBefore(before: Date): AsyncIterable<string> {
    for await (const file of this.files()) {
      if (isStorageKey(file.key) && file.writtenMs < before.getTime()) yield file.key;
    }
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
