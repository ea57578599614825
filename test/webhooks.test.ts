import { describe, expect, it } from 'vitest';
import { etagOf } from '../src/shared/etag.js';
import { loadConfig } from '../src/config.js';
import { resolveSafeAddress, systemResolveHost, URL_CHECK_LOOKUP_MS, type ResolveHost } from '../src/modules/webhooks/address-safety.js';
import { buildTestApp, call } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';
import { fakeResolver, recordEvent } from './helpers/webhooks.js';
import { insertEventsWithDeliveries } from '../src/modules/changes/changes.repository.js';
import { v7 as uuidv7 } from 'uuid';
import { sql } from 'drizzle-orm';
import { expectError } from './helpers/conventions.js';

const answers = fakeResolver({
  'hooks.example.com': ['93.184.215.14'],
  'v6.example.com': ['2606:4700:4700::1111'],
  'localhost.example.com': ['127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'lan.example.com': ['192.168.1.20'],
  'mixed.example.com': ['93.184.215.14', '10.0.0.7'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'mapped-link.example.com': ['::ffff:169.254.10.10'],
  'compat-link.example.com': ['::a9fe:a9fe'],
  'nat64-link.example.com': ['64:ff9b::a9fe:a9fe'],
});
/** slow.example.com never answers, like a resolver that cannot be reached. */
const resolveHost: ResolveHost = (hostname) => (hostname === 'slow.example.com' ? new Promise(() => undefined) : answers(hostname));
const ctx = await buildTestApp({ env: { WEBHOOK_WORKER_ENABLED: 'false' }, resolveHost });

const ENDPOINT_FIELDS = ['created_at', 'deleted_at', 'description', 'enabled', 'events', 'updated_at', 'url', 'uuid'];
const DELIVERY_FIELDS = [
  'attempts',
  'created_at',
  'event_type',
  'event_uuid',
  'last_attempt_at',
  'last_error',
  'last_response_body',
  'last_response_status',
  'next_attempt_at',
  'status',
  'updated_at',
  'uuid',
];
const valid = (overrides: Record<string, unknown> = {}) => ({ url: 'https://hooks.example.com/crm', events: ['*'], ...overrides });
const post = (key: string, body: unknown) => call(ctx.app, 'POST', '/api/v1/webhook_endpoints', { key, body });
const get = (key: string, uuid: string, query = '') => call(ctx.app, 'GET', `/api/v1/webhook_endpoints/${uuid}${query}`, { key });
const patch = (key: string, uuid: string, body: unknown, headers: Record<string, string> = {}) =>
  call(ctx.app, 'PATCH', `/api/v1/webhook_endpoints/${uuid}`, { key, body, headers });
const remove = (key: string, uuid: string, headers: Record<string, string> = {}) =>
  call(ctx.app, 'DELETE', `/api/v1/webhook_endpoints/${uuid}`, { key, headers });
const deliveries = (key: string, uuid: string, query = '') =>
  call(ctx.app, 'GET', `/api/v1/webhook_endpoints/${uuid}/deliveries${query}`, { key });
const retry = (key: string, uuid: string, deliveryUuid: string) =>
  call(ctx.app, 'POST', `/api/v1/webhook_endpoints/${uuid}/deliveries/${deliveryUuid}/retry`, { key });

async function createEndpoint(key: string, overrides: Record<string, unknown> = {}) {
  const response = await post(key, valid(overrides));
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

describe('POST /api/v1/webhook_endpoints', () => {
  it('creates an endpoint and shows its secret only in the create answer', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await post(key, valid({ events: ['invoice.created', 'payment.created'], description: 'Accounting' }));
    expect(response.status).toBe(200);
    const created = response.body.data;
    expect(Object.keys(created).sort()).toEqual([...ENDPOINT_FIELDS, 'secret'].sort());
    expect(created).toMatchObject({
      url: 'https://hooks.example.com/crm',
      description: 'Accounting',
      events: ['invoice.created', 'payment.created'],
      enabled: true,
      deleted_at: null,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);

    const fetched = await get(key, created.uuid);
    expect(fetched.status).toBe(200);
    expect(Object.keys(fetched.body.data).sort()).toEqual(ENDPOINT_FIELDS);
    expect(JSON.stringify(fetched.body)).not.toContain(created.secret.slice(6));
    const listed = await call(ctx.app, 'GET', '/api/v1/webhook_endpoints', { key });
    expect(listed.body.data.webhook_endpoints).toHaveLength(1);
    expect(JSON.stringify(listed.body)).not.toContain(created.secret.slice(6));
    const updated = await patch(key, created.uuid, { description: 'x' });
    expect(JSON.stringify(updated.body)).not.toContain(created.secret.slice(6));

    const other = await post(key, valid());
    expect(other.body.data.secret).not.toBe(created.secret);
  });

  it('defaults description to null and enabled to true; keeps each event type once', async () => {
    const { key } = await makeCompany(ctx.database);
    const created = await createEndpoint(key, { events: ['job.updated', 'job.updated', 'job.deleted'] });
    expect(created).toMatchObject({ description: null, enabled: true, events: ['job.updated', 'job.deleted'] });
    const disabled = await createEndpoint(key, { enabled: false, url: 'http://v6.example.com:8080/x?y=1' });
    expect(disabled).toMatchObject({ enabled: false, url: 'http://v6.example.com:8080/x?y=1' });
  });

  it('accepts each of the 24 event types and "*"', async () => {
    const { key } = await makeCompany(ctx.database);
    const objects = ['location', 'customer', 'job', 'job_photo', 'template', 'estimate', 'invoice', 'payment'];
    const all = objects.flatMap((object) => ['created', 'updated', 'deleted'].map((action) => `${object}.${action}`));
    expect(all).toHaveLength(24);
    expect((await createEndpoint(key, { events: all })).events).toEqual(all);
    expect((await createEndpoint(key, { events: ['*', 'job.created'] })).events).toEqual(['*', 'job.created']);
  });

  it.each([
    ['url missing', { events: ['*'] }, 'url'],
    ['url not a string', valid({ url: 42 }), 'url'],
    ['url relative', valid({ url: '/hooks' }), 'url'],
    ['url without scheme', valid({ url: 'hooks.example.com/crm' }), 'url'],
    ['url ftp', valid({ url: 'ftp://hooks.example.com/crm' }), 'url'],
    ['url javascript', valid({ url: 'javascript:alert(1)' }), 'url'],
    ['url with a line break', valid({ url: 'https://hooks.example.com/ok\r\nX: y' }), 'url'],
    ['url with spaces around it', valid({ url: '  https://hooks.example.com/ok  ' }), 'url'],
    ['url with a space inside', valid({ url: 'https://hooks.example.com/a b' }), 'url'],
    ['url on port 0', valid({ url: 'https://hooks.example.com:0/ok' }), 'url'],
    ['url too long', valid({ url: `https://hooks.example.com/${'a'.repeat(2049 - 'https://hooks.example.com/'.length)}` }), 'url'],
    ['events missing', { url: 'https://hooks.example.com/crm' }, 'events'],
    ['events empty', valid({ events: [] }), 'events'],
    ['events a bare type other than "*"', valid({ events: 'invoice.created' }), 'events'],
    ['events not an array', valid({ events: 5 }), 'events'],
    ['unknown event type', valid({ events: ['customer.exploded'] }), 'events[0]'],
    ['unknown object', valid({ events: ['user.created'] }), 'events[0]'],
    ['description not a string', valid({ description: 5 }), 'description'],
    ['description too long', valid({ description: 'x'.repeat(1001) }), 'description'],
    ['enabled not a boolean', valid({ enabled: 'yes' }), 'enabled'],
    ['secret is read-only', valid({ secret: 'whsec_abc' }), undefined],
    ['unknown field', valid({ colour: 'red' }), undefined],
  ])('refuses %s with 400', async (_name, body, field) => {
    const { key } = await makeCompany(ctx.database);
    expectError(await post(key, body), 400, 'validation_error', field);
  });

  it('takes events "*" alone as ["*"]', async () => {
    const { key } = await makeCompany(ctx.database);
    const response = await post(key, valid({ events: '*' }));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.events).toEqual(['*']);
    expect((await patch(key, response.body.data.uuid, { events: ['invoice.created'] })).body.data.events).toEqual(['invoice.created']);
    expect((await patch(key, response.body.data.uuid, { events: '*' })).body.data.events).toEqual(['*']);
  });

  it('accepts a url of exactly 2048 characters', async () => {
    const { key } = await makeCompany(ctx.database);
    const url = `https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length)}`;
    expect(url).toHaveLength(2048);
    expect((await createEndpoint(key, { url })).url).toBe(url);
  });
});

describe('address safety (WEBHOOK_ALLOW_PRIVATE_NETWORKS=false)', () => {
  it.each([
    ['loopback', 'http://127.0.0.1/hook'],
    ['loopback (other)', 'http://127.8.9.10/hook'],
    ['private 10/8', 'http://10.1.2.3/hook'],
    ['private 172.16/12', 'http://172.16.5.4/hook'],
    ['private 192.168/16', 'http://192.168.0.10/hook'],
    ['shared 100.64/10', 'http://100.64.0.1/hook'],
    ['link-local 169.254/16', 'http://169.254.169.254/latest/meta-data'],
    ['multicast', 'http://224.0.0.1/hook'],
    ['unspecified', 'http://0.0.0.0/hook'],
    ['IPv6 loopback', 'http://[::1]/hook'],
    ['IPv6 unique local', 'http://[fc00::1]/hook'],
    ['IPv6 unique local fd', 'http://[fd12:3456::1]/hook'],
    ['IPv6 link-local', 'http://[fe80::1]/hook'],
    ['IPv6 multicast', 'http://[ff02::1]/hook'],
    ['IPv6 unspecified', 'http://[::]/hook'],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/hook'],
    ['IPv4-mapped private', 'http://[::ffff:10.0.0.1]/hook'],
    ['IPv4-mapped link-local', 'http://[::ffff:169.254.169.254]/hook'],
    ['a name resolving to 127.0.0.1', 'https://localhost.example.com/hook'],
    ['a name resolving to 169.254.169.254', 'https://metadata.example.com/hook'],
    ['a name resolving to a private address', 'https://lan.example.com/hook'],
    ['a name with one private address among public ones', 'https://mixed.example.com/hook'],
    ['a name resolving to an IPv4-mapped loopback', 'https://mapped.example.com/hook'],
    ['a decimal IPv4 host', 'http://2130706433/hook'],
    ['a hexadecimal and octal IPv4 host', 'http://0xa9.0376.43518/hook'],
    // Every IPv6 form that carries a refused IPv4 address (DECISIONS §11), and site-local.
    ['IPv4-compatible link-local', 'http://[::169.254.169.254]/hook'],
    ['IPv4-compatible loopback in hex', 'http://[::7f00:1]/hook'],
    ['IPv4-compatible private', 'http://[::10.0.0.1]/hook'],
    ['IPv4-mapped link-local in full', 'http://[0:0:0:0:0:ffff:a9fe:a9fe]/hook'],
    ['IPv4-translated link-local', 'http://[::ffff:0:169.254.169.254]/hook'],
    ['IPv4-translated loopback', 'http://[::ffff:0:127.0.0.1]/hook'],
    ['NAT64 link-local', 'http://[64:ff9b::169.254.169.254]/hook'],
    ['NAT64 private', 'http://[64:ff9b::192.168.1.1]/hook'],
    ['local-use NAT64', 'http://[64:ff9b:1::a00:1]/hook'],
    ['6to4 of a private address', 'http://[2002:c0a8:101::1]/hook'],
    ['Teredo of a loopback client', 'http://[2001:0:4136:e378:8000:ffff:80ff:fffe]/hook'],
    ['site-local fec0::/10', 'http://[fec0::1]/hook'],
    ['site-local at the top of fec0::/10', 'http://[FEFF:ffff::1]/hook'],
    ['a name resolving to an IPv4-compatible link-local', 'https://compat-link.example.com/hook'],
    ['a name resolving to a NAT64 link-local', 'https://nat64-link.example.com/hook'],
  ])('refuses %s on create and update', async (_name, url) => {
    const { key } = await makeCompany(ctx.database);
    const refused = await post(key, valid({ url }));
    expectError(refused, 400, 'validation_error', 'url');
    const endpoint = await createEndpoint(key);
    expectError(await patch(key, endpoint.uuid, { url }), 400, 'validation_error', 'url');
    expect((await get(key, endpoint.uuid)).body.data.url).toBe('https://hooks.example.com/crm');
  });

  it('names the url field and never says what a host name resolves to', async () => {
    const { key } = await makeCompany(ctx.database);
    const refused = await post(key, valid({ url: 'https://metadata.example.com/' }));
    expectError(refused, 400, 'validation_error', 'url');
    const text = JSON.stringify(refused.body.error);
    expect(text).not.toMatch(/169\.254|link-local|loopback|private/);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ field: 'url' })]);
    expect(refused.body.error.message).toContain('metadata.example.com does not resolve to public addresses only');
    // An address literal is the client's own input: the message says which kind it is.
    expect((await post(key, valid({ url: 'http://[::ffff:0:169.254.169.254]/' }))).body.error.message).toMatch(/link-local address/);
  });

  it('accepts a name that does not resolve, on create and update: it is none of the refused addresses, and each delivery resolves it again', async () => {
    const { key } = await makeCompany(ctx.database);
    const created = await createEndpoint(key, { url: 'https://nowhere.example.com/hook' });
    expect(created.url).toBe('https://nowhere.example.com/hook');
    const other = await createEndpoint(key);
    const updated = await patch(key, other.uuid, { url: 'https://hooks.invalid/in' });
    expect(updated.status).toBe(200);
    expect(updated.body.data.url).toBe('https://hooks.invalid/in');
    // At delivery, a name that does not resolve is refused like one that resolves to a refused address.
    await expect(resolveSafeAddress(new URL('https://nowhere.example.com/hook'), { allowPrivateNetworks: false, resolveHost })).rejects.toThrow(
      'host nowhere.example.com does not resolve to public addresses only',
    );
  });

  it(`accepts a name whose lookup does not answer within ${URL_CHECK_LOOKUP_MS} ms`, { timeout: URL_CHECK_LOOKUP_MS + 10_000 }, async () => {
    const { key } = await makeCompany(ctx.database);
    const started = Date.now();
    const created = await createEndpoint(key, { url: 'https://slow.example.com/hook' });
    expect(created.url).toBe('https://slow.example.com/hook');
    expect(Date.now() - started).toBeGreaterThanOrEqual(URL_CHECK_LOOKUP_MS - 50);
  });

  it('refuses the real name localhost with the system resolver', async () => {
    await expect(
      resolveSafeAddress(new URL('http://localhost:9/x'), { allowPrivateNetworks: false, resolveHost: systemResolveHost }),
    ).rejects.toThrow(/does not resolve to public addresses only/);
  });

  it('accepts public addresses', async () => {
    const { key } = await makeCompany(ctx.database);
    await createEndpoint(key, { url: 'http://93.184.215.14/hook' });
    await createEndpoint(key, { url: 'https://[2606:4700:4700::1111]/hook' });
  });
});

describe('address safety with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true', () => {
  it('allows loopback, private and shared ranges but never link-local or site-local', async () => {
    const policy = { allowPrivateNetworks: true, resolveHost };
    for (const url of ['http://127.0.0.1/', 'http://[::1]/', 'http://10.0.0.1/', 'http://[fd00::1]/', 'http://100.64.1.1/', 'https://localhost.example.com/']) {
      await expect(resolveSafeAddress(new URL(url), policy), url).resolves.toBeDefined();
    }
    for (const url of [
      'http://169.254.169.254/',
      'http://[fe80::1]/',
      // Site-local is not among the ranges the flag names (DECISIONS §11 refuses fec0::/10 outright).
      'http://[fec0::1]/',
      'http://[feff::1]/',
      'https://metadata.example.com/',
      'https://mapped-link.example.com/',
      'https://compat-link.example.com/',
      'http://[::169.254.169.254]/',
      'http://[::ffff:0:169.254.169.254]/',
      'http://[64:ff9b::169.254.169.254]/',
      'http://224.0.0.1/',
      'http://0.0.0.0/',
    ]) {
      await expect(resolveSafeAddress(new URL(url), policy), url).rejects.toThrow();
    }
  });
});

describe('update and delete', () => {
  it('updates partially with PUT and PATCH; null clears description', async () => {
    const { key } = await makeCompany(ctx.database);
    const endpoint = await createEndpoint(key, { description: 'first' });
    const patched = await patch(key, endpoint.uuid, { events: ['job.created'] });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ url: endpoint.url, description: 'first', events: ['job.created'], enabled: true });
    const put = await call(ctx.app, 'PUT', `/api/v1/webhook_endpoints/${endpoint.uuid}`, {
      key,
      body: { description: null, url: 'https://hooks.example.com/v2' },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ description: null, url: 'https://hooks.example.com/v2', events: ['job.created'] });
    expect(put.body.data.updated_at >= endpoint.updated_at).toBe(true);
    expectError(await patch(key, endpoint.uuid, { events: [] }), 400, 'validation_error', 'events');
    expectError(await patch(key, endpoint.uuid, { url: null }), 400, 'validation_error', 'url');
    const secret = await patch(key, endpoint.uuid, { secret: 'x' });
    expectError(secret, 400, 'validation_error');
    // The secret is the server's, shown once by the create: read-only on an update too.
    expect(secret.body.error.details).toEqual([{ field: 'secret', code: 'read_only', message: 'is set by the server and cannot be sent' }]);
  });

  it('honours If-Match on update and delete', async () => {
    const { key } = await makeCompany(ctx.database);
    const endpoint = await createEndpoint(key);
    const current = (await get(key, endpoint.uuid)).body.data;
    expectError(await patch(key, endpoint.uuid, { description: 'x' }, { 'if-match': '"stale"' }), 412, 'precondition_failed');
    const ok = await patch(key, endpoint.uuid, { description: 'x' }, { 'if-match': etagOf(current) });
    expect(ok.status).toBe(200);
    expectError(await remove(key, endpoint.uuid, { 'if-match': etagOf(current) }), 412, 'precondition_failed');
    expect((await remove(key, endpoint.uuid, { 'if-match': etagOf(ok.body.data) })).status).toBe(200);
  });

  it('soft deletes: 404 afterwards, visible with include_deleted', async () => {
    const { key } = await makeCompany(ctx.database);
    const endpoint = await createEndpoint(key);
    const deleted = await remove(key, endpoint.uuid);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data.message).toBe('Webhook endpoint deleted successfully');
    expectError(await get(key, endpoint.uuid), 404, 'not_found');
    expectError(await remove(key, endpoint.uuid), 404, 'not_found');
    expectError(await patch(key, endpoint.uuid, { enabled: false }), 404, 'not_found');
    const withDeleted = await get(key, endpoint.uuid, '?include_deleted=true');
    expect(withDeleted.body.data.deleted_at).not.toBeNull();
    expect((await call(ctx.app, 'GET', '/api/v1/webhook_endpoints', { key })).body.data.webhook_endpoints).toHaveLength(0);
    const listed = await call(ctx.app, 'GET', '/api/v1/webhook_endpoints?include_deleted=true', { key });
    expect(listed.body.data.webhook_endpoints.map((item: { uuid: string }) => item.uuid)).toEqual([endpoint.uuid]);
  });

  it('lists newest first with pagination', async () => {
    const { key } = await makeCompany(ctx.database);
    const uuids = [];
    for (let index = 0; index < 3; index++) uuids.push((await createEndpoint(key)).uuid);
    const page = await call(ctx.app, 'GET', '/api/v1/webhook_endpoints?limit=2&page=1', { key });
    expect(page.body.data.webhook_endpoints.map((item: { uuid: string }) => item.uuid)).toEqual([uuids[2], uuids[1]]);
    expect(page.body.data.pagination).toEqual({ page: 1, limit: 2, total: 3, total_pages: 2 });
    expectError(await call(ctx.app, 'GET', '/api/v1/webhook_endpoints?limit=0', { key }), 400, 'validation_error', 'limit');
    expectError(await call(ctx.app, 'GET', '/api/v1/webhook_endpoints?status=x', { key }), 400, 'validation_error');
  });
});

describe('the 20-endpoint limit', () => {
  it('allows 20 live endpoints, refuses the 21st, and counts deleted ones out', async () => {
    const { key } = await makeCompany(ctx.database);
    const created = [];
    for (let index = 0; index < 20; index++) created.push(await createEndpoint(key));
    const refused = await post(key, valid());
    expectError(refused, 400, 'validation_error');
    expect(refused.body.error.message).toMatch(/20/);
    await remove(key, created[0].uuid);
    await createEndpoint(key);
    expectError(await post(key, valid()), 400, 'validation_error');
  });

  it('holds under concurrent creates', async () => {
    const { key } = await makeCompany(ctx.database);
    const responses = await Promise.all(Array.from({ length: 30 }, () => post(key, valid())));
    expect(responses.filter((response) => response.status === 200)).toHaveLength(20);
    expect(responses.filter((response) => response.status === 400)).toHaveLength(10);
    const listed = await call(ctx.app, 'GET', '/api/v1/webhook_endpoints?limit=100', { key });
    expect(listed.body.data.pagination.total).toBe(20);
  });
});

describe('tenant isolation', () => {
  it("answers 404 for another company's endpoint and its deliveries", async () => {
    const owner = await makeCompany(ctx.database);
    const stranger = await makeCompany(ctx.database);
    const endpoint = await createEndpoint(owner.key);
    const event = await recordEvent(ctx.database, owner.companyId);
    const [delivery] = (await deliveries(owner.key, endpoint.uuid)).body.data.deliveries;
    expect(delivery.event_uuid).toBe(event.uuid);
    expectError(await get(stranger.key, endpoint.uuid), 404, 'not_found');
    expectError(await get(stranger.key, endpoint.uuid, '?include_deleted=true'), 404, 'not_found');
    expectError(await patch(stranger.key, endpoint.uuid, { enabled: false }), 404, 'not_found');
    expectError(await remove(stranger.key, endpoint.uuid), 404, 'not_found');
    expectError(await deliveries(stranger.key, endpoint.uuid), 404, 'not_found');
    expectError(await retry(stranger.key, endpoint.uuid, delivery.uuid), 404, 'not_found');
    const strangerEndpoint = await createEndpoint(stranger.key);
    expectError(await retry(stranger.key, strangerEndpoint.uuid, delivery.uuid), 404, 'not_found');
    expect((await call(ctx.app, 'GET', '/api/v1/webhook_endpoints', { key: stranger.key })).body.data.webhook_endpoints).toHaveLength(1);
    expect((await get(owner.key, endpoint.uuid)).body.data.enabled).toBe(true);
    // An event of one company never makes a delivery for another's endpoint.
    expect((await deliveries(stranger.key, strangerEndpoint.uuid)).body.data.deliveries).toHaveLength(0);
  });
});

describe('deliveries log and retry', () => {
  it('makes one delivery per enabled, live, subscribed endpoint and lists it', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const all = await createEndpoint(key);
    const invoicesOnly = await createEndpoint(key, { events: ['invoice.created'] });
    const disabled = await createEndpoint(key, { enabled: false });
    const deleted = await createEndpoint(key);
    await remove(key, deleted.uuid);
    const event = await recordEvent(ctx.database, companyId, 'customer.created');
    await recordEvent(ctx.database, companyId, 'invoice.created');

    const listed = await deliveries(key, all.uuid);
    expect(listed.status).toBe(200);
    expect(listed.body.data.pagination.total).toBe(2);
    const customerDelivery = listed.body.data.deliveries[1];
    expect(Object.keys(customerDelivery).sort()).toEqual(DELIVERY_FIELDS);
    expect(customerDelivery).toMatchObject({
      event_uuid: event.uuid,
      event_type: 'customer.created',
      status: 'pending',
      attempts: 0,
      last_attempt_at: null,
      last_response_status: null,
      last_response_body: null,
      last_error: null,
    });
    expect(customerDelivery.next_attempt_at).toEqual(expect.any(String));
    expect((await deliveries(key, invoicesOnly.uuid)).body.data.deliveries.map((item: any) => item.event_type)).toEqual(['invoice.created']);
    expect((await deliveries(key, disabled.uuid)).body.data.deliveries).toHaveLength(0);
    expectError(await deliveries(key, deleted.uuid), 404, 'not_found');
    expect((await deliveries(key, deleted.uuid, '?include_deleted=true')).body.data.deliveries).toHaveLength(0);

    expect((await deliveries(key, all.uuid, '?status=pending')).body.data.deliveries).toHaveLength(2);
    expect((await deliveries(key, all.uuid, '?status=failed')).body.data.deliveries).toHaveLength(0);
    expectError(await deliveries(key, all.uuid, '?status=done'), 400, 'validation_error', 'status');
    expectError(await deliveries(key, all.uuid, '?limit=101'), 400, 'validation_error', 'limit');
    expectError(await deliveries(key, '00000000-0000-7000-8000-000000000000'), 404, 'not_found');
  });

  it('writes the same deliveries when a company with endpoints gets its events and deliveries in one statement', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const all = await createEndpoint(key);
    const invoicesOnly = await createEndpoint(key, { events: ['invoice.updated'] });
    const event = (type: string) => ({
      companyId,
      uuid: uuidv7(),
      type,
      objectType: type.split('.')[0],
      objectUuid: uuidv7(),
      data: { object: { type, note: 'Müller "quoted"' } },
    });
    const written = async () =>
      (
        (await ctx.database.db.execute(
          sql`select endpoint_uuid, event_uuid, event_type, uuid from webhook_deliveries where company_id = ${companyId} order by uuid`,
        )) as unknown as { rows: Array<{ endpoint_uuid: string; event_uuid: string; event_type: string; uuid: string }> }
      ).rows;
    // The first write finds the endpoints with its events (two statements); later ones write both at once:
    // a prepared batch of two, and a built batch of six.
    const batches = [[event('customer.created')], [event('invoice.updated'), event('job.created')], [
      ...['invoice.updated', 'customer.updated', 'invoice.updated', 'payment.created', 'invoice.updated', 'job.updated'].map(event),
    ]];
    for (const batch of batches) await insertEventsWithDeliveries(ctx.database.db, batch, () => uuidv7());
    const rows = await written();
    const expected = batches.flat().flatMap((recorded) => [
      { endpoint_uuid: all.uuid, event_uuid: recorded.uuid, event_type: recorded.type },
      ...(recorded.type === 'invoice.updated' ? [{ endpoint_uuid: invoicesOnly.uuid, event_uuid: recorded.uuid, event_type: recorded.type }] : []),
    ]);
    const key3 = (row: { endpoint_uuid: string; event_uuid: string }) => `${row.event_uuid}/${row.endpoint_uuid}`;
    expect(rows.map(({ uuid: _uuid, ...rest }) => rest).sort((a, b) => key3(a).localeCompare(key3(b)))).toEqual(
      expected.sort((a, b) => key3(a).localeCompare(key3(b))),
    );
    // Every delivery id is a UUIDv7 made by the service, each once.
    expect(rows.every((row) => row.uuid[14] === '7')).toBe(true);
    expect(new Set(rows.map((row) => row.uuid)).size).toBe(rows.length);
    // The events themselves are stored alike by both statements.
    const stored = (
      (await ctx.database.db.execute(
        sql`select uuid, type, object_type, object_uuid, data from events where company_id = ${companyId} order by seq`,
      )) as unknown as { rows: Array<Record<string, unknown>> }
    ).rows;
    expect(stored).toEqual(
      batches.flat().map((recorded) => ({
        uuid: recorded.uuid,
        type: recorded.type,
        object_type: recorded.objectType,
        object_uuid: recorded.objectUuid,
        data: recorded.data,
      })),
    );

    // Without endpoints the next events write no delivery, in either statement.
    await remove(key, all.uuid);
    await remove(key, invoicesOnly.uuid);
    for (const batch of [[event('invoice.updated')], [event('invoice.updated')]]) {
      await insertEventsWithDeliveries(ctx.database.db, batch, () => uuidv7());
    }
    expect(await written()).toHaveLength(rows.length);
  });

  it('fails the pending deliveries of a disabled endpoint, refuses their retry while it is disabled, and retry makes a failed one pending and due now', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const endpoint = await createEndpoint(key);
    await recordEvent(ctx.database, companyId);
    await patch(key, endpoint.uuid, { enabled: false });
    const [failed] = (await deliveries(key, endpoint.uuid, '?status=failed')).body.data.deliveries;
    expect(failed).toMatchObject({ status: 'failed', next_attempt_at: null, last_error: 'The endpoint was disabled.' });
    // A disabled endpoint gets no new deliveries.
    await recordEvent(ctx.database, companyId);
    expect((await deliveries(key, endpoint.uuid)).body.data.pagination.total).toBe(1);

    // No attempt is made for a disabled endpoint, so its retry is refused rather than answered pending.
    const refused = await retry(key, endpoint.uuid, failed.uuid);
    expectError(refused, 400, 'validation_error');
    expect(refused.body.error.message).toMatch(/disabled/);
    expectError(await retry(key, endpoint.uuid, '00000000-0000-7000-8000-000000000000'), 404, 'not_found');
    expect((await deliveries(key, endpoint.uuid, '?status=failed')).body.data.deliveries[0].status).toBe('failed');
    await patch(key, endpoint.uuid, { enabled: true });

    const before = Date.now();
    const retried = await retry(key, endpoint.uuid, failed.uuid);
    expect(retried.status).toBe(200);
    expect(Object.keys(retried.body.data).sort()).toEqual(DELIVERY_FIELDS);
    expect(retried.body.data).toMatchObject({ uuid: failed.uuid, status: 'pending' });
    expect(Math.abs(Date.parse(retried.body.data.next_attempt_at) - before)).toBeLessThan(5_000);
    expectError(await retry(key, endpoint.uuid, '00000000-0000-7000-8000-000000000000'), 404, 'not_found');
    expectError(await retry(key, endpoint.uuid, 'not-a-uuid'), 400, 'validation_error');
  });

  it('fails the pending deliveries of a deleted endpoint', async () => {
    const { key, companyId } = await makeCompany(ctx.database);
    const endpoint = await createEndpoint(key);
    const kept = await createEndpoint(key);
    await recordEvent(ctx.database, companyId);
    await remove(key, endpoint.uuid);
    const [failed] = (await deliveries(key, endpoint.uuid, '?include_deleted=true')).body.data.deliveries;
    expect(failed).toMatchObject({ status: 'failed', next_attempt_at: null, last_error: 'The endpoint was deleted.' });
    expectError(await retry(key, endpoint.uuid, failed.uuid), 404, 'not_found');
    expect((await deliveries(key, kept.uuid)).body.data.deliveries[0].status).toBe('pending');
  });
});

describe('webhook configuration', () => {
  it('reads WEBHOOK_RETRY_DELAYS as seconds, fractions allowed, and refuses anything else', () => {
    expect(loadConfig({}).WEBHOOK_RETRY_DELAYS).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS: '0.1, 2,30' }).WEBHOOK_RETRY_DELAYS).toEqual([0.1, 2, 30]);
    for (const bad of ['', '5,,6', '5,abc', '-1', '1e3', '700000']) {
      expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS: bad }), bad).toThrow(/WEBHOOK_RETRY_DELAYS/);
    }
  });

  it('defaults and validates the other webhook settings', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: false,
      WEBHOOK_TIMEOUT_MS: 10_000,
      WEBHOOK_WORKER_ENABLED: true,
      WEBHOOK_CONCURRENCY: 64,
    });
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }).WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(true);
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'maybe' })).toThrow(/WEBHOOK_ALLOW_PRIVATE_NETWORKS/);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '0' })).toThrow(/WEBHOOK_TIMEOUT_MS/);
    expect(() => loadConfig({ WEBHOOK_CONCURRENCY: '0' })).toThrow(/WEBHOOK_CONCURRENCY/);
  });
});
