import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';

/*
 * DECISIONS.md §1: a known path with another method is 405 method_not_allowed, and `Allow` lists the
 * methods it has. Walked from the OpenAPI document (every documented path and each method it lacks), plus
 * the undocumented routes a client may still meet.
 */
const ctx = await buildTestApp();
const { app } = ctx;
const { key } = await makeCompany(ctx.database);

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Paths = Record<string, Record<string, unknown>>;
const documented = Object.entries((app.swagger() as { paths: Paths }).paths).map(([path, operations]) => ({
  path,
  methods: Object.keys(operations).map((method) => method.toUpperCase()),
  pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

/** A concrete URL of a documented path: any well-formed id will do, since no route of this method matches. */
const urlOf = (path: string) => path.replace(/\{[^}]+\}/g, '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70');

/** What the router answers on a URL: the methods of every route pattern it matches (HEAD with GET). */
function allowedOn(url: string, extra: string[] = []): string[] {
  const methods = new Set(extra);
  for (const route of documented) if (route.pattern.test(url)) for (const method of route.methods) methods.add(method);
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

/** The methods of a path with no parameter: its own, even where a parameter route matches it too (/invoices/preview). */
function ownMethods(path: string): string[] {
  const methods = new Set(documented.find((route) => route.path === path)!.methods);
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

const cases = documented.flatMap(({ path }) => {
  const url = urlOf(path);
  const allowed = path.includes('{') ? allowedOn(url) : ownMethods(path);
  return METHODS.filter((method) => !allowed.includes(method)).map((method) => ({ method, path, url, allowed }));
});

describe('405 method_not_allowed with Allow, on every documented path', () => {
  it('walks the route table', () => {
    expect(cases.length).toBeGreaterThan(40);
    expect(cases).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ method: 'DELETE', path: '/api/v1/customers' }),
        // A literal path beside a parameter route: GET /invoices/preview is not GET /invoices/{uuid}.
        expect.objectContaining({ method: 'GET', path: '/api/v1/invoices/preview', allowed: ['POST'] }),
        expect.objectContaining({ method: 'PUT', path: '/api/v1/estimates/preview', allowed: ['POST'] }),
      ]),
    );
  });

  for (const { method, path, url, allowed } of cases) {
    it(`${method} ${path} -> 405, Allow: ${allowed.join(', ')}`, async () => {
      // A body with a field: the 405 comes before any look at the body.
      const response = await call(app, method, url, { key: path.startsWith('/api/') ? key : undefined, body: method === 'GET' ? undefined : { name: 'x' } });
      expect(response.status, JSON.stringify(response.body)).toBe(405);
      expect(response.headers.allow).toBe(allowed.join(', '));
      expect(response.body).toEqual({
        success: false,
        error: {
          code: 'method_not_allowed',
          message: `${method} is not allowed on ${url}; it allows ${allowed.join(', ')}.`,
          request_id: response.headers['x-request-id'],
        },
      });
    });
  }
});

describe('routes the document does not list', () => {
  it.each([
    ['DELETE', '/openapi.json', 'GET, HEAD'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['PUT', '/metrics', 'GET, HEAD'],
  ])('%s %s -> 405 with Allow: %s', async (method, url, allow) => {
    const response = await call(app, method as 'PUT', url);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe(allow);
  });

  it('keeps 404 for a path no route has, and 401 before 405 under /api/v1', async () => {
    const unknown = await call(app, 'GET', '/api/v1/nothing-here', { key });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    expect(unknown.headers.allow).toBeUndefined();
    const keyless = await call(app, 'DELETE', '/api/v1/customers');
    expect(keyless.status).toBe(401);
  });

  it('answers 404 or 405 whatever body comes with the request: fields, a non-object or malformed JSON', async () => {
    for (const rawBody of ['{"name":"x"}', 'null', '[1]', '{"name":']) {
      const unknown = await call(app, 'POST', '/api/v1/nothing-here', { key, rawBody });
      expect(unknown.status, rawBody).toBe(404);
      expect(unknown.body.error.code).toBe('not_found');
      const wrongMethod = await call(app, 'POST', '/api/v1/events', { key, rawBody });
      expect(wrongMethod.status, rawBody).toBe(405);
      expect(wrongMethod.headers.allow).toBe('GET, HEAD');
    }
  });

  it('takes a trailing slash and a query string as the same path', async () => {
    const response = await call(app, 'DELETE', '/api/v1/customers/?page=2', { key });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, POST');
  });
});
