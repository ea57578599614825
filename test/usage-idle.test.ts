import { eq, sum } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { usageCounters } from '../src/db/schema/index.js';
import { buildTestApp, call, type TestApp } from './helpers/app.js';
import { makeCompany } from './helpers/factories.js';

/**
 * The monthly limit must hold across the meter dropping an idle company from memory: the count comes back
 * from the database, this instance's own row included (DECISIONS.md §2: exact within an instance).
 */

const me = '/api/v1/companies/me';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function storedCount(ctx: TestApp, companyId: string): Promise<number> {
  const [row] = await ctx.database.db
    .select({ total: sum(usageCounters.requestCount) })
    .from(usageCounters)
    .where(eq(usageCounters.companyId, companyId));
  return Number(row?.total ?? 0);
}

async function useUpAndIdle(ctx: TestApp, idleMs: number) {
  const company = await makeCompany(ctx.database, { monthlyRequestLimit: 3 });
  for (const expected of ['1', '2', '3']) {
    const response = await call(ctx.app, 'GET', me, { key: company.key });
    expect(response.status).toBe(200);
    expect(response.headers['x-usage-count']).toBe(expected);
  }
  const refused = await call(ctx.app, 'GET', me, { key: company.key });
  expect(refused.status).toBe(403);
  expect(refused.body.error.code).toBe('usage_limit_exceeded');

  // Idle long enough for the meter to drop the company (several flushes after the eviction interval).
  await sleep(idleMs);
  expect(await storedCount(ctx, company.companyId)).toBe(3);

  for (let i = 0; i < 3; i++) {
    const after = await call(ctx.app, 'GET', me, { key: company.key });
    expect(after.status, JSON.stringify(after.body)).toBe(403);
    expect(after.body.error.code).toBe('usage_limit_exceeded');
    expect(after.headers['x-usage-count']).toBe('3');
  }
  await ctx.app.deps.usage.flush();
  expect(await storedCount(ctx, company.companyId)).toBe(3);
}

describe('monthly limit after the company idles', () => {
  it('still refuses after the meter dropped the idle company (USAGE_IDLE_EVICT_MS=1000)', async () => {
    const ctx = await buildTestApp({ env: { USAGE_IDLE_EVICT_MS: '1000', USAGE_FLUSH_INTERVAL_MS: '100', AUTH_CACHE_TTL_MS: '0' } });
    await useUpAndIdle(ctx, 2_000);
    await ctx.close();
  });

  it('keeps an exact count across an eviction while requests continue', async () => {
    const ctx = await buildTestApp({ env: { USAGE_IDLE_EVICT_MS: '1000', USAGE_FLUSH_INTERVAL_MS: '50', AUTH_CACHE_TTL_MS: '0' } });
    const company = await makeCompany(ctx.database, { monthlyRequestLimit: 8 });
    const counts: string[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await call(ctx.app, 'GET', me, { key: company.key });
      counts.push(response.headers['x-usage-count'] as string);
      await sleep(700);
    }
    await sleep(1_500);
    for (let i = 0; i < 5; i++) counts.push((await call(ctx.app, 'GET', me, { key: company.key })).headers['x-usage-count'] as string);
    expect(counts).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '8']);
    await ctx.close();
  });

  it('still refuses after 65 s idle with the default eviction interval', async () => {
    const ctx = await buildTestApp({ env: { AUTH_CACHE_TTL_MS: '0' } });
    expect(ctx.config.USAGE_IDLE_EVICT_MS).toBe(60_000);
    await useUpAndIdle(ctx, 65_000);
    await ctx.close();
  }, 120_000);
});
