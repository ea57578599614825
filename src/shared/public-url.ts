import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';

/** The base of absolute links the API hands out (photos, share links): PUBLIC_BASE_URL, else the request's host. */
export function publicBaseUrl(request: FastifyRequest, config: Pick<Config, 'PUBLIC_BASE_URL'>): string {
  return (config.PUBLIC_BASE_URL ?? `${request.protocol}://${request.host}`).replace(/\/+$/, '');
}
