import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { call } from './app.js';

/**
 * The soft-delete convention for one record: 404 for GET, PATCH and DELETE afterwards, and readable
 * with include_deleted=true with its deleted_at set.
 */
export async function expectSoftDeleted(app: FastifyInstance, key: string, itemPath: string) {
  for (const [method, body] of [['GET', undefined], ['PATCH', { notes: 'x' }], ['DELETE', undefined]] as const) {
    const response = await call(app, method, itemPath, { key, body });
    expect(response.status, `${method} ${itemPath}`).toBe(404);
    expect(response.body.error.code).toBe('not_found');
  }
  const withDeleted = await call(app, 'GET', `${itemPath}?include_deleted=true`, { key });
  expect(withDeleted.status).toBe(200);
  expect(withDeleted.body.data.deleted_at).toEqual(expect.any(String));
}
