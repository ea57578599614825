import type { Config } from '../config.js';
import type { Storage } from './storage.js';

/** The storage driver chosen by STORAGE_DRIVER. */
export async function createStorage(config: Config): Promise<Storage | undefined> {
  void config;
  return undefined;
}
