import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { call } from './app.js';

/** An answer as call() gives it. */
type Answer = { status: number; body: any; headers?: Record<string, unknown> };

/**
 * The error envelope (DECISIONS.md §1): the status, `{success: false, error}` and nothing else, the code, a
 * message and, when `field` is given, a detail that names it.
 */
export function expectError(response: Answer, status: number, code: string, field?: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toMatchObject({ success: false, error: { code, message: expect.any(String) } });
  expect(response.body.error.message.length).toBeGreaterThan(0);
  expect(Object.keys(response.body).sort()).toEqual(['error', 'success']);
  // The request id a client quotes is in the body as well as in the header.
  expect(response.body.error.request_id).toBeTypeOf('string');
  if (response.headers) expect(response.body.error.request_id).toBe(response.headers['x-request-id']);
  if (field) expect(response.body.error.details.map((detail: { field: string }) => detail.field)).toContain(field);
}

/** Any answer of the API: below 500, in the envelope (success on 200, else an error with a code and a message). */
export function expectEnvelope(status: number, payload: any, label: string) {
  expect(status, label).toBeLessThan(500);
  expect(payload, label).toBeTypeOf('object');
  expect(payload.success, label).toBe(status === 200);
  if (status !== 200) {
    expect(typeof payload.error?.code, label).toBe('string');
    expect(typeof payload.error?.message, label).toBe('string');
  }
}

/** 400 validation_error with a detail naming `field`. */
export function expectValidationError(response: Answer, field: string) {
  expectError(response, 400, 'validation_error', field);
}

/** 400 invalid_status_transition: a status move the rules refuse. */
export function expectTransitionRefused(response: Answer) {
  expectError(response, 400, 'invalid_status_transition');
}

/**
 * The soft-delete convention for one record: 404 for GET, PUT, PATCH and DELETE afterwards (the updates
 * sending `updateBody`), and readable with include_deleted=true with its deleted_at set. Returns that read.
 */
export async function expectSoftDeleted(app: FastifyInstance, key: string, itemPath: string, updateBody: unknown = { notes: 'x' }) {
  const attempts = [['GET', undefined], ['PUT', updateBody], ['PATCH', updateBody], ['DELETE', undefined]] as const;
  for (const [method, body] of attempts) {
    expectError(await call(app, method, itemPath, { key, body }), 404, 'not_found');
  }
  const withDeleted = await call(app, 'GET', `${itemPath}?include_deleted=true`, { key });
  expect(withDeleted.status).toBe(200);
  expect(withDeleted.body.data.deleted_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  return withDeleted;
}
