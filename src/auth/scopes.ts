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

/** Every scope a key may hold besides `*`, in the order of the areas. */
export const SCOPES: readonly Scope[] = SCOPE_AREAS.flatMap((area) => [`${area}:read`, `${area}:write`] as const);

/** What a key holds: `*` alone, or scopes. */
export const ALL_SCOPES = '*';
export type KeyScope = Scope | typeof ALL_SCOPES;

const KNOWN: ReadonlySet<string> = new Set<string>([ALL_SCOPES, ...SCOPES]);

export function isKeyScope(value: string): value is KeyScope {
  return KNOWN.has(value);
}

/** Whether a key holding `granted` may use a route that needs `needed` (write implies read). */
export function scopeAllows(granted: ReadonlySet<string>, needed: Scope): boolean {
  if (granted.has(ALL_SCOPES) || granted.has(needed)) return true;
  return needed.endsWith(':read') && granted.has(`${needed.slice(0, -':read'.length)}:write`);
}

/**
 * Whether every scope of `requested` is within `granted`: a key may create, widen, roll or revoke only keys
 * it could act as itself. `*` is within `*` only.
 */
export function scopesWithin(granted: ReadonlySet<string>, requested: readonly string[]): boolean {
  if (granted.has(ALL_SCOPES)) return true;
  return requested.every((scope) => scope !== ALL_SCOPES && scopeAllows(granted, scope as Scope));
}

/** The scopes as stored and answered: `["*"]`, or the distinct scopes in the order the client gave them. */
export function distinctScopes(scopes: readonly KeyScope[]): KeyScope[] {
  if (scopes.includes(ALL_SCOPES)) return [ALL_SCOPES];
  return [...new Set(scopes)];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope the route needs (checked right after ip_restricted, DECISIONS §12). */
    scope?: Scope;
  }
}
