import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { startMailSink } from './helpers/documents.js';
import { makeCompany, makeCustomer } from './helpers/factories.js';
import { seedAll, type SeededCompany } from './helpers/seed-all.js';

/*
 * DECISIONS.md §8: a request with `Content-Type: application/json` and no body, or only whitespace, is the
 * same as one with no body, on every route whose body is optional or absent. The routes are walked from the
 * OpenAPI document (the route table), so a new route of that kind is covered without a change here.
 */
const sink = await startMailSink();
const ctx = await buildTestApp({ env: { SMTP_URL: sink.url, WEBHOOK_WORKER_ENABLED: 'false' } });
const { app } = ctx;

type Operation = { method: 'POST' | 'PUT' | 'PATCH' | 'DELETE'; path: string };
type Paths = Record<string, Record<string, { requestBody?: { required?: boolean } }>>;
const documented = (app.swagger() as { paths: Paths }).paths;

/** Deletes run last, the records others hang on after them, so no variant finds a record another removed. */
const DELETE_ORDER = ['photos', 'visits', 'time_off', 'payments', 'invoices', 'estimates', 'webhook_endpoints', 'templates', 'jobs', 'customers', 'locations'];
const deleteRank = (path: string) => DELETE_ORDER.findIndex((name) => path.includes(`/${name}/`));

const bodyOptional: Operation[] = Object.entries(documented)
  .flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([method, operation]) => ['post', 'put', 'patch', 'delete'].includes(method) && operation.requestBody?.required !== true)
      .map(([method]) => ({ method: method.toUpperCase() as Operation['method'], path })),
  )
  .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE') || deleteRank(a.path) - deleteRank(b.path));

/** A company with one record of everything, a pending webhook delivery, and the share links of its documents. */
async function prepare() {
  const company = await makeCompany(ctx.database);
  const seed: SeededCompany = await seedAll(app, company.key);
  const endpoint = seed.byCollection['/api/v1/webhook_endpoints'];
  await call(app, 'PATCH', `/api/v1/webhook_endpoints/${endpoint}`, { key: company.key, body: { enabled: true } });
  await makeCustomer(app, company.key);
  const deliveries = await call(app, 'GET', `/api/v1/webhook_endpoints/${endpoint}/deliveries`, { key: company.key });
  const deliveryUuid: string = deliveries.body.data.deliveries[0].uuid;
  const shareToken = async (kind: 'estimates' | 'invoices') => {
    const link = await call(app, 'POST', `/api/v1/${kind}/${seed.byCollection[`/api/v1/${kind}`]}/share_link`, { key: company.key });
    return new URL(link.body.data.url).pathname.split('/').pop()!;
  };
  const tokens = { estimates: await shareToken('estimates'), invoices: await shareToken('invoices') };
  const customerEmail = 'dana@example.com';
  await call(app, 'PATCH', `/api/v1/customers/${seed.customerUuid}`, { key: company.key, body: { email: customerEmail } });
  const urlOf = (path: string) =>
    path
      .replace('{job_uuid}', seed.jobUuid)
      .replace('{photo_uuid}', seed.photoUuid)
      .replace('{delivery_uuid}', deliveryUuid)
      .replace('{user_id}', seed.userId)
      .replace(/^\/share\/(estimates|invoices)\/\{token\}/, (_, kind: 'estimates' | 'invoices') => `/share/${kind}/${tokens[kind]}`)
      .replace(/^(.*?)\/\{uuid\}/, (_, collection: string) => {
        const id = seed.byCollection[collection];
        if (!id) throw new Error(`No fixture for ${path}: add one to seedAll in test/helpers/seed-all.ts`);
        return `${collection}/${id}`;
      });
  // Emptying the sandbox takes a test key (DECISIONS §12); every other route takes the live key.
  const test = await call(app, 'POST', '/api/v1/api_keys', { key: company.key, body: { mode: 'test', scopes: ['*'] } });
  const keyFor = (path: string) => (path === '/api/v1/sandbox' ? (test.body.data.api_key as string) : company.key);
  return { keyFor, urlOf };
}

/** The ways to send no body: none at all, an empty JSON body, a JSON body of whitespace, fetch's `body: ''`. */
const VARIANTS = [
  { name: 'no body', send: {} },
  { name: 'empty application/json', send: { rawBody: '', headers: { 'content-type': 'application/json' } } },
  { name: 'whitespace application/json', send: { rawBody: ' \r\n\t ', headers: { 'content-type': 'application/json; charset=utf-8' } } },
  { name: 'empty text/plain', send: { rawBody: '', headers: { 'content-type': 'text/plain;charset=UTF-8' } } },
] as const;

const companies = await Promise.all(VARIANTS.map(() => prepare()));

describe('an empty JSON body is no body, on every route whose body is optional or absent', () => {
  it('walks the routes of that kind: DELETEs, share_link, send, retry and the customer page decline', () => {
    const names = bodyOptional.map(({ method, path }) => `${method} ${path}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'DELETE /api/v1/customers/{uuid}',
        'POST /api/v1/invoices/{uuid}/share_link',
        'POST /api/v1/estimates/{uuid}/send',
        'POST /api/v1/webhook_endpoints/{uuid}/deliveries/{delivery_uuid}/retry',
        'POST /share/estimates/{token}/decline',
      ]),
    );
    expect(names.length).toBeGreaterThanOrEqual(15);
  });

  for (const { method, path } of bodyOptional) {
    it(`${method} ${path}: the same answer with no body, an empty one, a blank one and an empty text/plain one`, async () => {
      const answers = [];
      for (const [index, variant] of VARIANTS.entries()) {
        const { keyFor, urlOf } = companies[index];
        const response = await call(app, method, urlOf(path), { key: path.startsWith('/api/') ? keyFor(path) : undefined, ...variant.send });
        answers.push({ variant: variant.name, status: response.status, code: response.body?.error?.code });
        expect(response.status, `${variant.name}: ${JSON.stringify(response.body)}`).toBe(200);
      }
      expect(new Set(answers.map((answer) => `${answer.status} ${answer.code}`)).size, JSON.stringify(answers)).toBe(1);
    });
  }

  it('a field sent to a route whose body is optional or absent is 400 unknown_field naming it (§4: bodies are strict)', async () => {
    const { keyFor, urlOf } = await prepare();
    for (const { method, path } of bodyOptional) {
      const response = await call(app, method, urlOf(path), { key: path.startsWith('/api/') ? keyFor(path) : undefined, body: { unexpected_field: 1 } });
      expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.error.details, `${method} ${path}`).toContainEqual(expect.objectContaining({ field: 'unexpected_field', code: 'unknown_field' }));
    }
  });

  it('still answers 400 "body is required" where a body is required', async () => {
    const key = companies[0].keyFor('/api/v1/customers');
    const sends = [{ rawBody: '' }, { rawBody: '   ' }, { rawBody: '', headers: { 'content-type': 'text/plain' } }];
    for (const send of sends) {
      const response = await call(app, 'POST', '/api/v1/customers', { key, ...send });
      expect(response.status, JSON.stringify(send)).toBe(400);
      expect(response.body.error.details).toEqual([{ field: 'body', code: 'required', message: 'is required' }]);
    }
  });

  it('sent the two emails of each variant', () => {
    expect(sink.messages.length).toBe(2 * VARIANTS.length);
  });
});

afterAll(() => sink.close());
