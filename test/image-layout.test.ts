import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './helpers/app.js';

/**
 * The Docker image's layout, rebuilt in a temporary directory: package.json, bin/, migrations/, the
 * compiled dist/ and only the production dependencies (what `npm prune --omit=dev` keeps), linked from
 * this checkout. No src/, no tsx, no TypeScript: `npm run admin` must still work there.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const image = mkdtempSync(join(tmpdir(), 'crm-image-'));
const { url, drop } = await createTestDatabase();
afterAll(async () => {
  await drop();
  rmSync(image, { recursive: true, force: true });
});

let built = false;

function buildImageLayout() {
  if (built) return;
  built = true;
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', join(image, 'dist')], {
    cwd: ROOT,
    stdio: 'pipe',
  });
  for (const entry of ['package.json', 'bin', 'migrations']) cpSync(join(ROOT, entry), join(image, entry), { recursive: true });
  const production = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .map((path) => relative(join(ROOT, 'node_modules'), path))
    // Top-level packages (hoisted) carry their nested node_modules with them.
    .filter((path) => path && !path.startsWith('..') && /^(@[^/]+\/)?[^/@][^/]*$/.test(path));
  for (const name of new Set(production)) {
    const target = join(image, 'node_modules', name);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), target, 'dir');
  }
}

const env = () => ({ PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', DATABASE_URL: url });

describe.skipIf(!url)('the image layout (dist/ and production dependencies only)', { timeout: 180_000 }, () => {
  it('runs the admin CLI: npm run admin works without src/ and without tsx', async () => {
    buildImageLayout();
    expect(existsSync(join(image, 'src'))).toBe(false);
    expect(existsSync(join(image, 'dist/cli/admin.js'))).toBe(true);
    // The build tools are not there.
    for (const tool of ['tsx', 'esbuild', 'typescript']) expect(existsSync(join(image, 'node_modules', tool)), tool).toBe(false);

    const version = await run('npm', ['run', '--silent', 'admin', '--', '--version'], { cwd: image, env: env() });
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);

    // The first key of a `docker compose up` user, then the company list, straight through node.
    const created = await run('npm', ['run', '--silent', 'admin', '--', 'create-company', '--name', 'Image Co', '--email', 'ops@image.example'], {
      cwd: image,
      env: env(),
    });
    const company = JSON.parse(created.stdout);
    expect(company.api_key).toMatch(/^fsc_live_[A-Za-z0-9_-]{43}$/);
    const listed = await run(process.execPath, ['dist/cli/admin.js', 'list-companies'], { cwd: image, env: env() });
    expect(JSON.parse(listed.stdout).companies.map((entry: { company_uuid: string }) => entry.company_uuid)).toContain(company.company_uuid);
  });

  it('renders a PDF: the render process loads the compiled document-worker.js, without tsx', async () => {
    buildImageLayout();
    expect(existsSync(join(image, 'dist/modules/documents/document-worker.js'))).toBe(true);
    const renderer = pathToFileURL(join(image, 'dist/modules/documents/document-renderer.js')).href;
    const document = {
      kind: 'invoice',
      company: { name: 'Image Co', email: 'ops@image.example', phone: null, address_lines: [] },
      customer: { name: 'Dana Reyes', service_address_lines: [] },
      customerEmail: null,
      jobTitle: 'Replace water heater',
      invoice: {
        uuid: '0190a5f0-0000-7000-8000-000000000001', invoice_number: 'INV-0001', issue_date: '2026-11-22', due_date: '2026-12-22',
        status: 'Pending', invoice_type: 'Full', progress_percentage: null, line_items: null, subtotal: 100, tax_amount: 0,
        discount_amount: 0, total_amount: 100, paid_amount: 0, balance_amount: 100, notes: null, terms: null,
      },
    };
    const script = `
      const { DocumentRenderer } = await import(${JSON.stringify(renderer)});
      const pdfs = new DocumentRenderer({ threads: 1, queue: 1, cacheBytes: 0 });
      const pdf = await pdfs.pdf(${JSON.stringify(document)}, 'image-company');
      await pdfs.close();
      process.stdout.write(pdf.subarray(0, 5).toString() + ' ' + pdf.length);`;
    const rendered = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: image, env: env() });
    expect(rendered.stdout).toMatch(/^%PDF- \d{3,}$/);
  });
});
