import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, makeCustomer, makeLocation, validCustomer, validLocation } from './helpers/factories.js';
import { seedAll } from './helpers/seed-all.js';
import { expectError } from './helpers/conventions.js';

const ctx = await buildTestApp();

function fields(response: { body: any }): string[] {
  return (response.body.error.details ?? []).map((detail: { field: string }) => detail.field);
}

describe('error envelope', () => {
  it('has success false, a code, a message and field details for validation errors', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/locations', { key, body: { name: 'X' } });
    expectError(response, 400, 'validation_error');
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(Array.isArray(response.body.error.details)).toBe(true);
    for (const detail of response.body.error.details) {
      expect(Object.keys(detail).sort()).toEqual(['code', 'field', 'message']);
      expect(detail).toEqual({ field: expect.any(String), code: 'required', message: 'is required' });
    }
    expect(fields(response)).toEqual(expect.arrayContaining(['address1', 'city', 'state', 'zip']));
    expect(response.body.error.message).toBe('Invalid body: address1 is required; city is required; state is required; zip is required.');
  });
});

describe('errors of many problems (§11: bounded work)', () => {
  it('name at most 100 details and summarize 20 in the message, counting the rest; bodies of thousands of fields are refused unread', async () => {
    const { key } = await makeCompany(ctx.database);
    const body: Record<string, unknown> = { ...validCustomer() };
    for (let i = 0; i < 950; i++) body[`extra_${i}`] = 1;
    const response = await call(ctx.app, 'POST', '/api/v1/customers', { key, body });
    expectError(response, 400, 'validation_error');
    expect(response.body.error.details).toHaveLength(100);
    expect(response.body.error.details[0]).toEqual({ field: 'extra_0', code: 'unknown_field', message: expect.any(String) });
    expect(response.body.error.message).toMatch(/^Invalid body: extra_0 [^;]+(; extra_\d+ [^;]+){19}; and 930 more problems\.$/);
    expect(JSON.stringify(response.body).length).toBeLessThan(20_000);

    // A page anyone can post to with no key: the same bound.
    const page = await ctx.app.inject({
      method: 'POST',
      url: '/share/estimates/not-a-token/accept',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ signature_name: 'x', ...Object.fromEntries(Array.from({ length: 990 }, (_, i) => [`f${i}`, 1])) }),
    });
    expect(page.statusCode).toBe(400);
    expect(page.json().error.details).toHaveLength(100);
    expect(page.body.length).toBeLessThan(20_000);

    // Past 1,000 fields in the body, or 10,923 in an object inside it, the body is refused before it is parsed.
    const flood = await ctx.app.inject({
      method: 'POST',
      url: '/share/estimates/not-a-token/accept',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ signature_name: 'x', ...Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [`f${i}`, 1])) }),
    });
    expect(flood.statusCode).toBe(400);
    expect(flood.json().error.details).toEqual([{ field: 'body', code: 'out_of_range', message: 'must have at most 1000 fields' }]);
    const nested = await call(ctx.app, 'POST', '/api/v1/customers', {
      key,
      body: { ...validCustomer(), internal_flags: Object.fromEntries(Array.from({ length: 12_000 }, (_, i) => [`k${i}`, 0])) },
    });
    expectError(nested, 400, 'validation_error');
    expect(nested.body.error.details).toEqual([{ field: 'internal_flags', code: 'out_of_range', message: 'must have objects of at most 10923 fields' }]);
    // Colons inside strings are text, not fields.
    const colons = await call(ctx.app, 'POST', '/api/v1/customers', { key, body: { ...validCustomer(), notes: ':'.repeat(5_000) } });
    expect(colons.status).toBe(200);
  });
});

describe('bodies nested past any use (§11)', () => {
  it('are refused before they are parsed, naming the top-level field; a free-form field past 32 levels still names itself', async () => {
    const { key } = await makeCompany(ctx.database);
    const deep = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
    const post = (payload: string) =>
      ctx.app.inject({ method: 'POST', url: '/api/v1/customers', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload });
    const start = '{"first_name":"A","last_name":"B","notes":"[[[[{{{{ \\" [[[[","internal_flags":';
    for (const levels of [40, 100, 150_000]) {
      const response = await post(`${start}${deep(levels)}}`);
      expect(response.statusCode, String(levels)).toBe(400);
      expect(response.json().error.details, String(levels)).toEqual([{ field: 'internal_flags', code: 'out_of_range', message: 'must nest at most 32 levels deep' }]);
    }
    const arrays = await post(`{"selected_addons":${'['.repeat(400_000)}${']'.repeat(400_000)}}`);
    expect(arrays.statusCode).toBe(400);
    expect(arrays.json().error.details[0]).toMatchObject({ field: 'selected_addons', code: 'out_of_range' });
    const rootArray = await post('['.repeat(100) + ']'.repeat(100));
    expect(rootArray.json().error.details[0]).toMatchObject({ field: 'body', code: 'out_of_range' });
    // Brackets inside strings are text, and 32 levels of a free-form field are fine.
    const fine = await post(`${start}${deep(32)}}`);
    expect(fine.statusCode, fine.body).toBe(200);
    expect(fine.json().data.notes).toBe('[[[[{{{{ " [[[[');
    // No key: 401 before anything about the body.
    const anonymous = await ctx.app.inject({ method: 'POST', url: '/api/v1/customers', headers: { 'content-type': 'application/json' }, payload: `{"a":${'['.repeat(1000)}${']'.repeat(1000)}}` });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('malformed request bodies', () => {
  it('refuses malformed JSON with 400 validation_error', async () => {
    const { key } = await makeCompany(ctx.database);
    expectError(await call(ctx.app, 'POST', '/api/v1/customers', { key, rawBody: '{"first_name": "A",' }), 400, 'validation_error');
    expectError(await call(ctx.app, 'POST', '/api/v1/customers', { key, rawBody: "{'first_name': 'A'}" }), 400, 'validation_error');
  });

  it('answers an empty JSON body where one is required as an absent body: 400 body is required', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const rawBody of ['', '  \n\t']) {
      const response = await call(ctx.app, 'POST', '/api/v1/customers', { key, rawBody });
      expectError(response, 400, 'validation_error');
      expect(response.body.error.details).toEqual([{ field: 'body', code: 'required', message: 'is required' }]);
      expect(response.body.error.message).toBe('Invalid body: body is required.');
    }
  });

  it('says what to send instead of a text/plain body', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/customers', {
      key,
      rawBody: 'first_name=A',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
    expectError(response, 400, 'validation_error');
    expect(response.body.error.message).toBe('Invalid headers: Content-Type must be application/json, not text/plain.');
    expect(response.body.error.details).toEqual([{ field: 'Content-Type', code: 'invalid', message: 'must be application/json, not text/plain' }]);
  });

  it('refuses a body that is not a JSON object', async () => {
    const { key } = await makeCompany(ctx.database);
    expectError(await call(ctx.app, 'POST', '/api/v1/customers', { key, body: [validCustomer()] }), 400, 'validation_error');
    expectError(await call(ctx.app, 'POST', '/api/v1/customers', { key, rawBody: '"text"' }), 400, 'validation_error');
    expectError(await call(ctx.app, 'POST', '/api/v1/customers', { key, rawBody: 'null' }), 400, 'validation_error');
  });

  it('refuses a content type other than JSON with 400 validation_error', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const response = await call(ctx.app, 'POST', '/api/v1/customers', {
        key,
        rawBody: 'first_name=A&last_name=B',
        headers: { 'content-type': type },
      });
      expectError(response, 400, 'validation_error');
    }
  });

  it('accepts application/json with a charset', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/customers', {
      key,
      rawBody: JSON.stringify(validCustomer()),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(response.status).toBe(200);
    expect(response.body.success).toBe(true);
  });

  it('refuses a body over the size limit with 413 payload_too_large', async () => {
    const { key } = await makeCompany(ctx.database);
    const body = JSON.stringify(validCustomer({ notes: 'x'.repeat(2 * 1024 * 1024) }));
    const response = await call(ctx.app, 'POST', '/api/v1/customers', { key, rawBody: body });
    expectError(response, 413, 'payload_too_large');
    expect(response.body.error.message).toBe(`The request body is larger than the limit of ${ctx.config.BODY_LIMIT_BYTES} bytes (1 MiB).`);
  });

  it('refuses an over-long string with 400, never a 500', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/customers', { key, body: validCustomer({ first_name: 'x'.repeat(100_000) }) });
    expectError(response, 400, 'validation_error');
    expect(fields(response)).toContain('first_name');
  });

  it('refuses a huge number (1e400) where a string or boolean belongs with 400', async () => {
    const { key } = await makeCompany(ctx.database);
    const raw = JSON.stringify(validLocation()).replace(/}$/, ',"is_primary":1e400}');
    const response = await call(ctx.app, 'POST', '/api/v1/locations', { key, rawBody: raw });
    expectError(response, 400, 'validation_error');
    expect(fields(response)).toContain('is_primary');
    const asName = await call(ctx.app, 'POST', '/api/v1/customers', { key, rawBody: '{"first_name":1e400,"last_name":"B"}' });
    expectError(asName, 400, 'validation_error');
    expect(fields(asName)).toContain('first_name');
  });

  it('never answers 500 for a huge number inside a free-form object', async () => {
    const { key } = await makeCompany(ctx.database);
    const raw = JSON.stringify(validLocation()).replace(/}$/, ',"business_hours":{"mon":1e400}}');
    const response = await call(ctx.app, 'POST', '/api/v1/locations', { key, rawBody: raw });
    expect(response.status).toBeLessThan(500);
    expect(typeof response.body.success).toBe('boolean');
  });

  it('refuses null for a required field', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/customers', { key, body: { first_name: null, last_name: 'B' } });
    expectError(response, 400, 'validation_error');
    expect(fields(response)).toEqual(['first_name']);
    const location = await makeLocation(ctx.app, key);
    const update = await call(ctx.app, 'PATCH', `/api/v1/locations/${location.uuid}`, { key, body: { name: null } });
    expectError(update, 400, 'validation_error');
    expect(fields(update)).toEqual(['name']);
  });

  it('refuses wrong types field by field', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/customers', {
      key,
      body: validCustomer({ is_vip: 'yes', internal_flags: [1, 2], notes: 5 }),
    });
    expectError(response, 400, 'validation_error');
    expect(fields(response).sort()).toEqual(['internal_flags', 'is_vip', 'notes']);
  });
});

const bodyCompany = await makeCompany(ctx.database);
const bodySeed = await seedAll(ctx.app, bodyCompany.key);

describe('a body that is not a JSON object, on every write route', () => {
  const company = bodyCompany;
  const seed = bodySeed;
  type Paths = Record<string, Record<string, unknown>>;
  const documented = (ctx.app.swagger() as { paths: Paths }).paths;
  const writes = Object.entries(documented)
    .filter(([path]) => path.startsWith('/api/v1'))
    .flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((method) => ['post', 'put', 'patch', 'delete'].includes(method))
        .map((method) => ({ method: method.toUpperCase() as 'POST', path })),
    );
  const urlOf = (path: string) =>
    path.replace('{job_uuid}', seed.jobUuid).replace(/\{[^}]+\}$/, () => {
      const id = seed.byCollection[path.replace(/\/\{[^}]+\}$/, '')];
      if (!id) throw new Error(`No fixture for ${path}: add one to seedAll in test/helpers/seed-all.ts`);
      return id;
    });

  it('covers every write route of the route table', () => {
    expect(writes.length).toBeGreaterThanOrEqual(30);
    expect(writes).toEqual(expect.arrayContaining([
      { method: 'POST', path: '/api/v1/invoices/preview' },
      { method: 'POST', path: '/api/v1/estimates/preview' },
      { method: 'PUT', path: '/api/v1/numbering' },
      { method: 'POST', path: '/api/v1/jobs/{job_uuid}/photos' },
    ]));
  });

  for (const { method, path } of writes) {
    it(`${method} ${path}: null, an array, a string, a number or a boolean is 400 and changes nothing`, async () => {
      const url = urlOf(path);
      for (const rawBody of ['null', '[]', '[{}]', '"text"', '""', '42', 'true']) {
        const response = await call(ctx.app, method, url, { key: company.key, rawBody });
        expectError(response, 400, 'validation_error');
        expect(response.body.error.details, rawBody).toEqual([
          { field: 'body', code: 'invalid_type', message: expect.stringMatching(/^must be a JSON object, not (null|an array|a string|a number|a boolean)$/) },
        ]);
      }
      // Nothing was written: the addressed record is still there, unchanged.
      if (/\}$/.test(path)) expect((await call(ctx.app, 'GET', url, { key: company.key })).status).toBe(200);
    });
  }

  it('keeps {} valid where it was, and an absent body on the invoice preview', async () => {
    const { key } = company;
    const invoicePreview = await call(ctx.app, 'POST', '/api/v1/invoices/preview', { key, body: {} });
    expect(invoicePreview.status, JSON.stringify(invoicePreview.body)).toBe(200);
    expect(invoicePreview.body.data.preview.total_amount).toBe(0);
    const absent = await call(ctx.app, 'POST', '/api/v1/invoices/preview', { key });
    expect(absent.status, JSON.stringify(absent.body)).toBe(200);
    expect(absent.body.data).toEqual(invoicePreview.body.data);
    expect((await call(ctx.app, 'PUT', '/api/v1/numbering', { key, body: {} })).status).toBe(200);
    for (const [collection, id] of Object.entries(seed.byCollection)) {
      // Photos and events have no update.
      if (collection.includes('photos') || collection.endsWith('/events')) continue;
      const response = await call(ctx.app, 'PATCH', `${collection}/${id}`, { key, body: {} });
      expect(response.status, `${collection} ${JSON.stringify(response.body)}`).toBe(200);
    }
  });

  it('accepts a bodiless DELETE sent with an empty text/plain body', async () => {
    const customer = await makeCustomer(ctx.app, company.key);
    const response = await call(ctx.app, 'DELETE', `/api/v1/customers/${customer.uuid}`, {
      key: company.key,
      rawBody: '',
      headers: { 'content-type': 'text/plain' },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  });
});

describe('strict bodies', () => {
  it('refuses an unknown field and names it in details', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/customers', { key, body: validCustomer({ favourite_color: 'blue' }) });
    expectError(response, 400, 'validation_error');
    expect(response.body.error.details).toEqual([{ field: 'favourite_color', code: 'unknown_field', message: 'is not an accepted field' }]);
    expect(response.body.error.message).toContain('favourite_color');
  });

  it('refuses read-only fields on create and on update', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const extra of [
      { uuid: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70' },
      { created_at: '2026-01-01T00:00:00Z' },
      { updated_at: '2026-01-01T00:00:00Z' },
      { deleted_at: null },
      { company_id: '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70' },
    ]) {
      const response = await call(ctx.app, 'POST', '/api/v1/locations', { key, body: validLocation(extra) });
      expectError(response, 400, 'validation_error');
      expect(fields(response)).toEqual(Object.keys(extra));
    }
    const location = await makeLocation(ctx.app, key);
    const update = await call(ctx.app, 'PUT', `/api/v1/locations/${location.uuid}`, { key, body: { uuid: location.uuid, name: 'New' } });
    expectError(update, 400, 'validation_error');
    expect(fields(update)).toEqual(['uuid']);
    const unchanged = await call(ctx.app, 'GET', `/api/v1/locations/${location.uuid}`, { key });
    expect(unchanged.body.data.name).toBe(location.name);
  });

  it('refuses an unknown field nested in a path of details with the full path', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'POST', '/api/v1/customers', { key, body: { first_name: 'A', last_name: 'B', extra_one: 1, extra_two: 2 } });
    expectError(response, 400, 'validation_error');
    expect(fields(response).sort()).toEqual(['extra_one', 'extra_two']);
  });
});

describe('query strings', () => {
  it('refuses an unknown query parameter', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'GET', '/api/v1/locations?sort=name', { key });
    expectError(response, 400, 'validation_error');
    expect(fields(response)).toEqual(['sort']);
    expectError(await call(ctx.app, 'GET', '/api/v1/customers?q=abc', { key }), 400, 'validation_error');
    expectError(await call(ctx.app, 'GET', '/api/v1/users?search=abc', { key }), 400, 'validation_error');
  });

  it('refuses an unknown query parameter on a single-record read', async () => {
    const { key } = await makeCompany(ctx.database);
    const location = await makeLocation(ctx.app, key);
    expectError(await call(ctx.app, 'GET', `/api/v1/locations/${location.uuid}?expand=all`, { key }), 400, 'validation_error');
  });

  it.each([
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=1.5', 'page'],
    ['page=abc', 'page'],
    ['page=1e400', 'page'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=', 'limit'],
    // Numbers in other spellings than plain digits are not read as some number (DECISIONS §5: anything else 400).
    ['limit=0x10', 'limit'],
    ['limit=1e1', 'limit'],
    ['limit=%2010', 'limit'],
    ['limit=%2B10', 'limit'],
    ['limit=10.0', 'limit'],
    ['page=0x1', 'page'],
    ['include_deleted=yes', 'include_deleted'],
    ['include_deleted=TRUEISH', 'include_deleted'],
    ['include_deleted=1&include_deleted=0', 'include_deleted'],
  ])('refuses %s with 400 naming %s', async (query, field) => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'GET', `/api/v1/customers?${query}`, { key });
    expectError(response, 400, 'validation_error');
    expect(fields(response)).toEqual([field]);
  });

  it('a number out of bounds is out_of_range whichever side it falls (limit=-1 as limit=101)', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const query of ['limit=-1', 'limit=0', 'limit=101', 'page=-1', 'page=0']) {
      const response = await call(ctx.app, 'GET', `/api/v1/customers?${query}`, { key });
      expect(response.body.error.details.map((detail: { code: string }) => detail.code), query).toEqual(['out_of_range']);
    }
    expect((await call(ctx.app, 'GET', '/api/v1/customers?limit=-1.5', { key })).body.error.details[0].code).toBe('invalid_type');
  });

  it('accepts the bounds and the boolean spellings', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const query of ['limit=1', 'limit=100', 'page=1', 'include_deleted=true', 'include_deleted=false', 'include_deleted=1', 'include_deleted=0']) {
      const response = await call(ctx.app, 'GET', `/api/v1/locations?${query}`, { key });
      expect(response.status, query).toBe(200);
      expect(response.body.success).toBe(true);
    }
  });
});

describe('path parameters', () => {
  it('answers a malformed uuid in the path with a 400 or 404 envelope', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const id of ['not-a-uuid', '123', "1'%20or%201=1", 'x'.repeat(300), '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f7z']) {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
        const response = await call(ctx.app, method, `/api/v1/customers/${id}`, {
          key,
          body: method === 'PUT' || method === 'PATCH' ? { notes: 'x' } : undefined,
        });
        expect([400, 404], `${method} ${id}`).toContain(response.status);
        expect(response.body.success).toBe(false);
        expect(['validation_error', 'not_found']).toContain(response.body.error.code);
      }
    }
  });

  it('answers a malformed percent-encoding or an over-long path segment with the envelope and a request id', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const url of ['/api/v1/customers/%', '/api/v1/customers/%E0%A4%A', `/api/v1/customers/${'x'.repeat(300)}`]) {
      const response = await call(ctx.app, 'GET', url, { key });
      expect([400, 404], url).toContain(response.status);
      expect(response.body).toMatchObject({ success: false, error: { code: expect.stringMatching(/^(validation_error|not_found)$/) } });
      expect(response.headers['x-request-id']).toBeTruthy();
    }
  });

  it('answers a well-formed unknown uuid with 404 not_found', async () => {
    const { key } = await makeCompany(ctx.database);
    const id = '019a4c1e-7c2b-7d3e-9f10-2b3c4d5e6f70';
    expectError(await call(ctx.app, 'GET', `/api/v1/locations/${id}`, { key }), 404, 'not_found');
    expectError(await call(ctx.app, 'PATCH', `/api/v1/locations/${id}`, { key, body: { name: 'x' } }), 404, 'not_found');
    expectError(await call(ctx.app, 'DELETE', `/api/v1/customers/${id}`, { key }), 404, 'not_found');
  });

  it('accepts an upper-case uuid as the same record', async () => {
    const { key } = await makeCompany(ctx.database);
    const location = await makeLocation(ctx.app, key);
    const response = await call(ctx.app, 'GET', `/api/v1/locations/${location.uuid.toUpperCase()}`, { key });
    expect(response.status).toBe(200);
    expect(response.body.data.uuid).toBe(location.uuid);
  });
});

describe('security headers', () => {
  it('sends nosniff and no-store on API responses', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await call(ctx.app, 'GET', '/api/v1/companies/me', { key });
    expect(response.status).toBe(200);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['cache-control']).toBe('no-store');
  });
});

describe('values PostgreSQL refuses', () => {
  it('answers 400 for a NUL character in text and in a JSON object, and stores nothing', async () => {
    const company = await makeCompany(ctx.database);
    const inText = await call(ctx.app, 'POST', '/api/v1/customers', {
      key: company.key,
      body: validCustomer({ notes: 'before\u0000after' }),
    });
    expect(inText.status).toBe(400);
    expect(inText.body.error.code).toBe('validation_error');
    const inJson = await call(ctx.app, 'POST', '/api/v1/customers', {
      key: company.key,
      body: validCustomer({ internal_flags: { note: 'a\u0000b' } }),
    });
    expect(inJson.status).toBe(400);
    expect(inJson.body.error.code).toBe('validation_error');
    const list = await call(ctx.app, 'GET', '/api/v1/customers', { key: company.key });
    expect(list.body.data.pagination.total).toBe(0);
  });
});
