import { afterAll, describe, expect, it } from 'vitest';
import { linkSecrets } from '../src/db/schema/index.js';
import { sharedLinkSecret } from '../src/storage/link-secret.js';
import { createTestDatabase } from './helpers/app.js';
import { insertJob } from './helpers/billing-factories.js';
import { makeCompany } from './helpers/factories.js';
import { spawnServer, type ServerProcess } from './helpers/server-process.js';

const testDb = await createTestDatabase();
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const server of servers) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  await testDb.database.close();
  await testDb.drop();
});

describe('the link-signing secret kept in the database', () => {
  it('is made once and the same for every caller', async () => {
    const first = await sharedLinkSecret(testDb.database.db);
    const again = await Promise.all([sharedLinkSecret(testDb.database.db), sharedLinkSecret(testDb.database.db)]);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(again).toEqual([first, first]);
    expect(await testDb.database.db.select().from(linkSecrets)).toHaveLength(1);
  });

  it.skipIf(!testDb.url)('signs with PHOTO_URL_SECRET unset: a share link made by one server opens on another, started after the first has gone', { timeout: 60_000 }, async () => {
    const company = await makeCompany(testDb.database);
    const env = { DATABASE_URL: testDb.url, LOG_LEVEL: 'warn', PHOTO_URL_SECRET: undefined, NODE_ENV: 'production' };
    const first = await spawnServer(env);
    servers.push(first);
    const headers = { authorization: `Bearer ${company.key}`, 'content-type': 'application/json' };
    const post = async (base: string, path: string, body: unknown) => {
      const response = await fetch(`${base}/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const text = await response.text();
      expect(response.status, `${path} ${text}`).toBe(200);
      return (JSON.parse(text) as { data: Record<string, any> }).data;
    };
    const customer = await post(first.base, '/customers', { first_name: 'Link', last_name: 'Keeper' });
    const job = await insertJob(testDb.database, company.companyId, customer.uuid);
    const invoice = await post(first.base, '/invoices', { customer_uuid: customer.uuid, job_uuid: job, due_date: '2030-01-31', line_items: [{ description: 'Service', quantity: 1, unit_price: 50 }] });
    const link = await post(first.base, `/invoices/${invoice.uuid}/share_link`, {});
    const path = new URL(link.url).pathname;
    expect((await fetch(`${first.base}${path}`)).status).toBe(200);

    first.child.kill('SIGTERM');
    await first.exited;
    const second = await spawnServer(env);
    servers.push(second);
    const page = await fetch(`${second.base}${path}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(invoice.invoice_number);
    expect(await testDb.database.db.select().from(linkSecrets)).toHaveLength(1);
  });
});
