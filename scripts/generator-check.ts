import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient as heyApi } from '@hey-api/openapi-ts';
import { generate as orval } from 'orval';
import { schemaTypes } from './typescript-client.js';

/**
 * The OpenAPI document as three client generators see it: hey-api, orval and openapi-typescript (with
 * openapi-fetch) each generate a client from openapi/openapi.json into a scratch folder, and `tsc --strict`
 * compiles it together with a short program that lists, creates and reads customers, uploads a photo and
 * makes a share link through it. A generator's output that does not compile, or a program that no longer
 * types, fails the check (CI runs it: `npm run generators:check`). Nothing is fetched but npm packages.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
// Another document may be named, e.g. to see what an older one gave: npm run generators:check -- old.json
const input = process.argv[2] ? resolve(process.argv[2]) : join(root, 'openapi/openapi.json');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

// Inside node_modules, so the scratch programs resolve openapi-fetch and @types/node from this checkout.
mkdirSync(join(root, 'node_modules/.cache'), { recursive: true });
const scratch = mkdtempSync(join(root, 'node_modules/.cache/generator-check-'));

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    types: ['node'],
    skipLibCheck: true,
    noUnusedLocals: true,
  },
  include: ['**/*.ts'],
};

/** The same calls through each client; each program also names the component types it relies on. */
const PROGRAMS = {
  'hey-api': `
import { client } from './client/client.gen.js';
import { createCustomer, createInvoiceShareLink, getCustomer, listCustomers, uploadJobPhotos } from './client/index.js';
import type { CreateCustomerBody, Customer, CustomerListResponse, CustomerResponse, JobStatus, ShareLinkResponse, UploadedPhotosResponse } from './client/types.gen.js';

export async function firstDay(key: string, jobUuid: string, invoiceUuid: string, photo: Blob): Promise<string> {
  // The document's first server is an absolute URL, so the client works without a base URL of its own.
  client.setConfig({ headers: { Authorization: \`Bearer \${key}\` } });
  const page = await listCustomers({ query: { limit: 10, include_deleted: true, sort: '-updated_at' }, throwOnError: true });
  const listed: CustomerListResponse = page.data;
  const firstEmail: string | null | undefined = listed.data.customers[0]?.email;
  const body: CreateCustomerBody = { first_name: 'Dana', last_name: 'Reyes', email: firstEmail ?? null, customer_type: 'Residential' };
  const created = await createCustomer({ body, throwOnError: true });
  const answer: CustomerResponse = created.data;
  const fetched = await getCustomer({ path: { uuid: answer.data.uuid }, throwOnError: true });
  const customer: Customer = fetched.data.data;
  const uploaded = await uploadJobPhotos({ path: { job_uuid: jobUuid }, body: { photos: [photo], photo_type: 'before' }, throwOnError: true });
  const photos: UploadedPhotosResponse = uploaded.data;
  const link = await createInvoiceShareLink({ path: { uuid: invoiceUuid }, throwOnError: true });
  const shared: ShareLinkResponse = link.data;
  const status: JobStatus = 'Scheduled';
  return [customer.last_name, photos.data.photos[0]?.photo_url, shared.data.url, status].join(' ');
}
`,
  orval: `
import { createCustomer, createInvoiceShareLink, getCustomer, listCustomers, uploadJobPhotos } from './client/api.js';
import type { CreateCustomerBody, Customer, CustomerListResponse, CustomerResponse, JobStatus, ShareLinkResponse, UploadedPhotosResponse } from './client/api.js';

export async function firstDay(key: string, jobUuid: string, invoiceUuid: string, photo: Blob): Promise<string> {
  const init: RequestInit = { headers: { Authorization: \`Bearer \${key}\` } };
  const page = await listCustomers({ limit: 10, include_deleted: true, sort: '-updated_at' }, init);
  if (page.status !== 200) throw new Error(page.data.error.message);
  const listed: CustomerListResponse = page.data;
  const firstEmail: string | null | undefined = listed.data.customers[0]?.email;
  const body: CreateCustomerBody = { first_name: 'Dana', last_name: 'Reyes', email: firstEmail ?? null, customer_type: 'Residential' };
  const created = await createCustomer(body, init);
  if (created.status !== 200) throw new Error(created.data.error.message);
  const answer: CustomerResponse = created.data;
  const fetched = await getCustomer(answer.data.uuid, undefined, init);
  // 304 (If-None-Match) has no body.
  if (fetched.status !== 200) throw new Error(fetched.status === 304 ? 'not modified' : fetched.data.error.message);
  const customer: Customer = fetched.data.data;
  const uploaded = await uploadJobPhotos(jobUuid, { photos: [photo], photo_type: 'before' }, init);
  if (uploaded.status !== 200) throw new Error(uploaded.data.error.request_id);
  const photos: UploadedPhotosResponse = uploaded.data;
  // No body: the generated call sends Content-Type: application/json with an empty body, which is no body.
  const link = await createInvoiceShareLink(invoiceUuid, undefined, init);
  if (link.status !== 200) throw new Error(link.data.error.code);
  const shared: ShareLinkResponse = link.data;
  const status: JobStatus = 'Scheduled';
  return [customer.last_name, photos.data.photos[0]?.photo_url, shared.data.url, status].join(' ');
}
`,
  'openapi-typescript': `
import createClient from 'openapi-fetch';
import type { components, paths } from './client/schema.js';

type Customer = components['schemas']['Customer'];
type CreateCustomerBody = components['schemas']['CreateCustomerBody'];

export async function firstDay(key: string, jobUuid: string, invoiceUuid: string, photo: Blob): Promise<string> {
  const api = createClient<paths>({ baseUrl: 'http://localhost:3000', headers: { Authorization: \`Bearer \${key}\` } });
  const page = await api.GET('/api/v1/customers', { params: { query: { limit: 10, include_deleted: true, sort: '-updated_at' } } });
  if (!page.data) throw new Error(page.error.error.message);
  const listed: components['schemas']['CustomerListResponse'] = page.data;
  const firstEmail: string | null | undefined = listed.data.customers[0]?.email;
  const body: CreateCustomerBody = { first_name: 'Dana', last_name: 'Reyes', email: firstEmail ?? null, customer_type: 'Residential' };
  const created = await api.POST('/api/v1/customers', { body });
  if (!created.data) throw new Error(created.error.error.message);
  const fetched = await api.GET('/api/v1/customers/{uuid}', { params: { path: { uuid: created.data.data.uuid } } });
  if (!fetched.data) throw new Error(fetched.error.error.message);
  const customer: Customer = fetched.data.data;
  const uploaded = await api.POST('/api/v1/jobs/{job_uuid}/photos', {
    params: { path: { job_uuid: jobUuid } },
    body: { photos: [photo], photo_type: 'before' },
    bodySerializer(fields) {
      const form = new FormData();
      for (const file of fields.photos) form.append('photos', file);
      if (fields.photo_type) form.append('photo_type', fields.photo_type);
      return form;
    },
  });
  if (!uploaded.data) throw new Error(uploaded.error.error.message);
  const link = await api.POST('/api/v1/invoices/{uuid}/share_link', { params: { path: { uuid: invoiceUuid } } });
  if (!link.data) throw new Error(link.error.error.message);
  const status: components['schemas']['JobStatus'] = 'Scheduled';
  return [customer.last_name, uploaded.data.data.photos[0]?.photo_url, link.data.data.url, status].join(' ');
}
`,
};

async function generateAll(): Promise<void> {
  await heyApi({
    input,
    output: join(scratch, 'hey-api/client'),
    plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
    logs: { level: 'silent' },
  });
  await orval({
    input: { target: input },
    output: { target: join(scratch, 'orval/client/api.ts'), client: 'fetch', mode: 'single', baseUrl: { getBaseUrlFromSpecification: true } },
  });
  mkdirSync(join(scratch, 'openapi-typescript/client'), { recursive: true });
  writeFileSync(join(scratch, 'openapi-typescript/client/schema.d.ts'), await schemaTypes(input));
}

let failed = false;
try {
  // orval writes progress to the console; the check prints only its own lines.
  const log = console.log;
  console.log = () => undefined;
  try {
    await generateAll();
  } finally {
    console.log = log;
  }
  for (const [generator, program] of Object.entries(PROGRAMS)) {
    const dir = join(scratch, generator);
    writeFileSync(join(dir, 'first-day.ts'), program);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
    try {
      execFileSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir, stdio: 'pipe', encoding: 'utf8' });
      process.stdout.write(`${generator}: the generated client and the program compile with tsc --strict.\n`);
    } catch (error) {
      failed = true;
      const output = (error as { stdout?: string }).stdout ?? String(error);
      process.stderr.write(`${generator}: tsc --strict failed:\n${output.split('\n').slice(0, 40).join('\n')}\n`);
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
// The generators' versions, for a failure report.
const versions = ['@hey-api/openapi-ts', 'orval', 'openapi-typescript'].map(
  (name) => `${name} ${JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')).version}`,
);
process.stdout.write(`generators: ${versions.join(', ')}\n`);
if (failed) process.exit(1);
