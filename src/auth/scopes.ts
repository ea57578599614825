/**
 * The areas a key's scopes name (DECISIONS §12, §13): `<area>:read` or `<area>:write`, write implying read,
 * or `*` for everything. Every route under /api/v1 declares the one scope it needs in its config.
 */
export const SCOPE_AREAS = [
  'company',
  'users',
  'locations',
  'customers',
  'jobs',
  'job_photos',
  'templates',
  'estimates',
  'invoices',
  'payments',
  'numbering',
  'events',
  'webhook_endpoints',
  'api_keys',
  'schedule',
] as const;

export type ScopeArea = (typeof SCOPE_AREAS)[number];

/** The scope one route needs. */
export type Scope = `${ScopeArea}:${'read' | 'write'}`;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope the route needs (checked right after ip_restricted, DECISIONS §12). */
    scope?: Scope;
  }
}
