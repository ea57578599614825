import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany, validCustomer } from './helpers/factories.js';
import { makeJob, PNG_BYTES, uploadPhotos } from './helpers/jobs-factories.js';
import { expectError } from './helpers/conventions.js';

/** Bodies and queries are read exactly as sent: what cannot be read so is refused, never stored changed. */
const ctx = await buildTestApp();

async function post(key: string, payload: Buffer | string, headers: Record<string, string> = {}) {
  const response = await ctx.app.inject({
    method: 'POST',
    url: '/api/v1/customers',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    payload,
  });
  return { status: response.statusCode, body: response.json(), headers: response.headers };
}

async function customerCount(key: string): Promise<number> {
  const list = await call(ctx.app, 'GET', '/api/v1/customers', { key });
  return list.body.data.pagination.total;
}

describe('JSON bodies are UTF-8', () => {
  it('refuses bytes that are not UTF-8 (Latin-1, overlong sequences) instead of storing U+FFFD', async () => {
    const { key } = await makeCompany(ctx.database);
    const latin1 = Buffer.concat([Buffer.from('{"first_name":"Jos'), Buffer.from([0xe9]), Buffer.from('","last_name":"B"}')]);
    const overlong = Buffer.concat([Buffer.from('{"first_name":"a'), Buffer.from([0xc0, 0xaf]), Buffer.from('","last_name":"B"}')]);
    for (const payload of [latin1, overlong]) {
      const response = await post(key, payload);
      expectError(response, 400, 'validation_error');
      expect(response.body.error.details).toEqual([{ field: 'body', code: 'invalid_format', message: 'must be UTF-8 text' }]);
    }
    expect(await customerCount(key)).toBe(0);

    const accented = await post(key, Buffer.from(JSON.stringify(validCustomer({ first_name: 'José' })), 'utf8'));
    expect(accented.status).toBe(200);
    expect(accented.body.data.first_name).toBe('José');
  });

  it('refuses a declared charset other than UTF-8, and accepts utf-8 however it is spelled', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const charset of ['iso-8859-1', 'utf-16', '"windows-1252"']) {
      const response = await post(key, JSON.stringify(validCustomer()), { 'content-type': `application/json; charset=${charset}` });
      expectError(response, 400, 'validation_error');
      expect(response.body.error.details).toEqual([
        { field: 'Content-Type', code: 'invalid', message: expect.stringContaining(`not charset=${charset.replaceAll('"', '')}`) },
      ]);
    }
    expect(await customerCount(key)).toBe(0);
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8']) {
      const response = await post(key, JSON.stringify(validCustomer()), { 'content-type': `application/json; charset=${charset}` });
      expect(response.status, charset).toBe(200);
    }
  });
});

describe('coded bodies', () => {
  it('refuses a Content-Encoding it does not decode, compressed or not, and a transfer coding other than chunked', async () => {
    const { key } = await makeCompany(ctx.database);
    const json = JSON.stringify(validCustomer());
    for (const [payload, encoding] of [
      [gzipSync(json), 'gzip'],
      [json, 'gzip'],
      [json, 'br'],
    ] as const) {
      const response = await post(key, payload, { 'content-encoding': encoding });
      expectError(response, 400, 'validation_error');
      expect(response.body.error.details).toEqual([{ field: 'Content-Encoding', code: 'invalid', message: expect.stringContaining(`not ${encoding}`) }]);
    }
    expect(await customerCount(key)).toBe(0);
    expect((await post(key, json, { 'content-encoding': 'identity' })).status).toBe(200);
  });

  it('still answers 401 first to a coded body without a key', async () => {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/customers',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: gzipSync('{}'),
    });
    expect(response.statusCode).toBe(401);
  });
});

describe('keys that reach a prototype', () => {
  it('are refused naming the key, not called invalid JSON, and store nothing', async () => {
    const { key } = await makeCompany(ctx.database);
    const proto = await post(key, '{"first_name":"a","last_name":"b","__proto__":{"x":1}}');
    expectError(proto, 400, 'validation_error');
    expect(proto.body.error.details).toEqual([{ field: '__proto__', code: 'invalid', message: 'is a name no field of a body may have' }]);
    const constructor = await post(key, '{"first_name":"a","last_name":"b","internal_flags":{"constructor":{"prototype":{"x":1}}}}');
    expectError(constructor, 400, 'validation_error');
    expect(constructor.body.error.details).toEqual([{ field: 'constructor', code: 'invalid', message: 'is a name no field of a body may have' }]);
    expect(await customerCount(key)).toBe(0);
  });
});

describe('unsupported content types', () => {
  it('name Content-Type in details, whatever the type', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'application/merge-patch+json']) {
      const response = await post(key, 'first_name=A&last_name=B', { 'content-type': type });
      expectError(response, 400, 'validation_error');
      expect(response.body.error.details, type).toEqual([{ field: 'Content-Type', code: 'invalid', message: expect.stringContaining(`not ${type}`) }]);
    }
  });
});

describe('query text', () => {
  it('refuses a NUL character in a search before it reaches the database, naming the parameter', async () => {
    const { key } = await makeCompany(ctx.database);
    for (const url of ['/api/v1/customers?search=%00', '/api/v1/jobs?search=a%00', '/api/v1/invoices?search=%00b']) {
      const response = await call(ctx.app, 'GET', url, { key });
      expectError(response, 400, 'validation_error');
      expect(response.body.error.details, url).toEqual([{ field: 'search', code: 'invalid_format', message: expect.stringMatching(/NUL/) }]);
    }
  });
});

describe('photo uploads', () => {
  it('a photos part without a filename is a file field sent as text: 400 invalid_type naming it', async () => {
    const { key } = await makeCompany(ctx.database, { addons: ['photos'] });
    const job = await makeJob(ctx.app, key);
    const response = await uploadPhotos(ctx.app, key, job.uuid, [], { photos: PNG_BYTES.toString('latin1') });
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ field: 'photos', code: 'invalid_type', message: expect.stringMatching(/must be a file/) }]);
    const list = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos`, { key });
    expect(list.body.data.pagination.total).toBe(0);
  });
});

describe('a field named twice in one object', () => {
  it('is refused naming its path, at any depth and however its name is escaped, and stores nothing', async () => {
    const { key } = await makeCompany(ctx.database);
    const cases: Array<[string, string]> = [
      ['{"first_name":"A","first_name":"B","last_name":"C"}', 'first_name'],
      ['{"first_name":"A","last_name":"C","\\u0066irst_name":"B"}', 'first_name'],
      ['{"first_name":"A","last_name":"C","internal_flags":{"tags":[{"a":1},{"b":2,"b":3}]}}', 'internal_flags.tags[1].b'],
    ];
    for (const [payload, field] of cases) {
      const response = await post(key, payload);
      expectError(response, 400, 'validation_error');
      expect(response.body.error.details, payload).toEqual([{ field, code: 'invalid', message: 'is named more than once in its object; send each field once' }]);
    }
    expect(await customerCount(key)).toBe(0);

    // The same name in different objects, or a name that appears as a value, is no repeat.
    const fine = await post(key, '{"first_name":"last_name","last_name":"C","internal_flags":{"a":{"a":1},"b":[{"a":1},{"a":2}]}}');
    expect(fine.status).toBe(200);
    expect(fine.body.data.internal_flags).toEqual({ a: { a: 1 }, b: [{ a: 1 }, { a: 2 }] });
  });

  it('on an update changes nothing', async () => {
    const { key } = await makeCompany(ctx.database);
    const created = await post(key, JSON.stringify(validCustomer({ first_name: 'Ann' })));
    const uuid = created.body.data.uuid;
    const response = await ctx.app.inject({
      method: 'PATCH',
      url: `/api/v1/customers/${uuid}`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: '{"first_name":"Bea","first_name":"Cy"}',
    });
    expectError({ status: response.statusCode, body: response.json() }, 400, 'validation_error');
    const after = await call(ctx.app, 'GET', `/api/v1/customers/${uuid}`, { key });
    expect(after.body.data.first_name).toBe('Ann');
  });
});

describe('a body of whitespace', () => {
  async function send(key: string, method: 'PUT' | 'DELETE', url: string, payload: Buffer) {
    const response = await ctx.app.inject({ method, url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload });
    return { status: response.statusCode, body: response.json() };
  }

  it("is no body only when it is JSON's whitespace (after a byte order mark); other spaces are not JSON", async () => {
    const { key } = await makeCompany(ctx.database);
    const customer = await post(key, JSON.stringify(validCustomer()));
    const item = `/api/v1/customers/${customer.body.data.uuid}`;
    for (const space of ['\u00a0', '\u2028', '\u3000', '\ufeff\u00a0', '\u000b', '\u000c']) {
      const payload = Buffer.from(space, 'utf8');
      const numbering = await send(key, 'PUT', '/api/v1/numbering', payload);
      expectError(numbering, 400, 'validation_error');
      expect(numbering.body.error.message, JSON.stringify(space)).toBe('The body is not valid JSON.');
      expectError(await send(key, 'DELETE', item, payload), 400, 'validation_error');
    }
    expect((await call(ctx.app, 'GET', item, { key })).status).toBe(200);

    expect((await send(key, 'PUT', '/api/v1/numbering', Buffer.from(' \t\r\n', 'utf8'))).status).toBe(200);
    expect((await send(key, 'PUT', '/api/v1/numbering', Buffer.from('\ufeff \n', 'utf8'))).status).toBe(200);
    expect((await send(key, 'DELETE', item, Buffer.from('\ufeff', 'utf8'))).status).toBe(200);
  });
});

describe('photo upload fields', () => {
  it('a field sent twice is 400 naming it, and no photo is kept', async () => {
    const { key } = await makeCompany(ctx.database, { addons: ['photos'] });
    const job = await makeJob(ctx.app, key);
    const boundary = 'twice-boundary';
    const part = (headers: string, body: Buffer | string) =>
      Buffer.concat([Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), Buffer.from(body), Buffer.from('\r\n')]);
    for (const [field, first, second] of [
      ['photo_type', 'before', 'after'],
      ['photo_type', 'before', 'before'],
      ['taken_at', '2026-01-01T10:00:00Z', '2026-01-02T10:00:00Z'],
    ]) {
      const payload = Buffer.concat([
        part(`Content-Disposition: form-data; name="${field}"`, first),
        part('Content-Disposition: form-data; name="photos"; filename="a.png"\r\nContent-Type: image/png', PNG_BYTES),
        part(`Content-Disposition: form-data; name="${field}"`, second),
        Buffer.from(`--${boundary}--\r\n`),
      ]);
      const response = await ctx.app.inject({
        method: 'POST',
        url: `/api/v1/jobs/${job.uuid}/photos`,
        headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload,
      });
      const answer = { status: response.statusCode, body: response.json() };
      expectError(answer, 400, 'validation_error');
      expect(answer.body.error.details, `${field} ${second}`).toEqual([{ field, code: 'invalid', message: 'is sent more than once; send it once' }]);
    }
    const list = await call(ctx.app, 'GET', `/api/v1/jobs/${job.uuid}/photos`, { key });
    expect(list.body.data.pagination.total).toBe(0);
  });
});
