import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp } from './helpers/app.js';
import { CHROMIUM, runsWith } from './helpers/system.js';

/**
 * The reference page at /docs in a real browser (Debian's headless Chromium), opened by a host name that is
 * not localhost (mapped with --host-resolver-rules) over plain HTTP, as a colleague on the LAN would.
 */
const HOST = 'crm-docs.example.test';
const ctx = await buildTestApp();
await ctx.app.listen({ host: '127.0.0.1', port: 0 });
const port = (ctx.app.server.address() as AddressInfo).port;
const work = mkdtempSync(join(tmpdir(), 'crm-docs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function chromium(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      CHROMIUM as string,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        `--user-data-dir=${join(work, `profile-${Math.random().toString(36).slice(2)}`)}`,
        `--host-resolver-rules=MAP ${HOST} 127.0.0.1`,
        // Lets the page's script load the document and render before the DOM or screenshot is taken.
        '--virtual-time-budget=30000',
        '--enable-logging=stderr',
        '--v=0',
        ...args,
        `http://${HOST}:${port}/docs/`,
      ],
      { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => (error && !stdout ? reject(error) : resolve({ stdout, stderr })),
    );
  });
}

const decode = (html: string) =>
  html.replace(/&amp;/g, '&').replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>');

describe.runIf(runsWith('Chromium', Boolean(CHROMIUM), 'apt-get install chromium'))('the reference page in headless Chromium', { timeout: 600_000 }, () => {
  it('has a CSP that works over plain HTTP on any host: only this server, no upgrade-insecure-requests', async () => {
    const page = await ctx.app.inject({ method: 'GET', url: '/docs/', headers: { host: `${HOST}:${port}` } });
    expect(page.statusCode).toBe(200);
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/upgrade-insecure-requests|https:|\*/);
    // The page's script is served by this server, not a CDN.
    expect(page.body).toMatch(/<script src="js\/scalar\.js">/);
    expect(page.body).not.toMatch(/cdn\.|jsdelivr|unpkg/);
    const script = await ctx.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    expect(script.headers['cache-control']).toBe('public, max-age=86400');
    // The whole bundle, streamed from the package's file.
    const bundle = fileURLToPath(new URL('./js/standalone.js', import.meta.resolve('@scalar/fastify-api-reference')));
    expect(script.rawPayload.length).toBe(statSync(bundle).size);
    // The page's own copies of the document, which its download button offers.
    const json = await ctx.app.inject({ method: 'GET', url: '/docs/openapi.json' });
    expect(json.statusCode).toBe(200);
    expect(json.json().paths['/api/v1/customers']).toBeDefined();
    const yaml = await ctx.app.inject({ method: 'GET', url: '/docs/openapi.yaml' });
    expect(yaml.statusCode).toBe(200);
    expect(yaml.headers['content-type']).toMatch(/yaml/);
    expect(yaml.body).toMatch(/^openapi: 3\.1\.0$/m);
    const bare = await ctx.app.inject({ method: 'GET', url: '/docs' });
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/docs/');
  });

  it('renders every operation of the document, with curl samples and search, and nothing blocked', async () => {
    const { stdout: dom, stderr } = await chromium(['--window-size=1280,900', '--dump-dom']);
    const text = decode(dom);
    const document = ctx.app.swagger() as { paths: Record<string, Record<string, { summary?: string }>> };
    const summaries = Object.values(document.paths).flatMap((operations) => Object.values(operations).map((operation) => operation.summary));
    expect(summaries.length).toBeGreaterThan(40);
    const missing = summaries.filter((summary) => !text.includes(summary as string));
    expect(missing).toEqual([]);
    // Request samples (Shell/curl and Node.js among the clients), the search box, the documented error codes.
    expect(text).toContain('curl');
    expect(text).toMatch(/client-libraries-text">Shell</);
    expect(text).toMatch(/client-libraries-text">Node\.js</);
    expect(text).toMatch(/Search/);
    for (const code of ['unauthorized', 'ip_restricted', 'addon_required', 'usage_limit_exceeded', 'not_found', 'rate_limited']) {
      expect(text, code).toContain(code);
    }
    // The browser refused nothing: no CSP violation, no failed script.
    expect(stderr).not.toMatch(/Content Security Policy|Refused to|Uncaught/);
  });

  it('draws at desktop and phone widths', async () => {
    for (const [name, size] of [
      ['desktop', '1280,900'],
      ['phone', '390,844'],
    ]) {
      const file = join(work, `${name}.png`);
      // Headless Chromium now and then never finishes a --screenshot run under virtual time; a second run does.
      for (let attempt = 0; attempt < 2 && !existsSync(file); attempt++) {
        await chromium([`--window-size=${size}`, `--screenshot=${file}`, '--hide-scrollbars']).catch(() => undefined);
      }
      expect(existsSync(file), name).toBe(true);
      const png = readFileSync(file);
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      // PNG width and height from the IHDR chunk match the window.
      expect(`${png.readUInt32BE(16)},${png.readUInt32BE(20)}`).toBe(size);
      // A rendered page, not a blank one: a blank PNG of this size compresses to a few KB.
      expect(statSync(file).size, name).toBeGreaterThan(20_000);
    }
  });
});
