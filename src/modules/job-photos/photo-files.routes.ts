import type { FastifyPluginAsync } from 'fastify';
import { notFound } from '../../errors.js';
import { LOCAL_FILES_PATH, LocalStorage } from '../../storage/local-storage.js';
import { contentTypeOfKey, isStorageKey } from '../../storage/storage.js';

function queryValue(query: unknown, name: string): string | undefined {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Serves locally stored photos through the signed, expiring links photo_url carries; no API key. A bad
 * key, signature or expiry is a plain 404 so a link reveals nothing about what exists.
 */
export const photoFileRoutes: FastifyPluginAsync = async (app) => {
  app.get(`${LOCAL_FILES_PATH}/*`, { schema: { hide: true } }, async (request, reply) => {
    const storage = app.deps.storage;
    const key = (request.params as Record<string, string>)['*'] ?? '';
    const expires = queryValue(request.query, 'expires');
    const signature = queryValue(request.query, 'signature');
    if (!(storage instanceof LocalStorage) || !isStorageKey(key) || !storage.signer.verify(key, expires, signature)) {
      throw notFound('File');
    }
    const file = await storage.read(key);
    if (!file) throw notFound('File');
    const secondsLeft = Math.max(0, Number(expires) - Math.floor(Date.now() / 1000));
    return reply
      .header('content-type', contentTypeOfKey(key))
      // Served from the API's origin: a file must never run as a page there, whatever its bytes.
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('content-disposition', `inline; filename="${key.slice(key.lastIndexOf('/') + 1)}"`)
      .header('content-length', String(file.size))
      .header('cache-control', `private, max-age=${secondsLeft}`)
      .send(file.stream);
  });
};
