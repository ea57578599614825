import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import { describe, expect, it } from 'vitest';
import { pdfPages, pdfText } from './helpers/documents.js';

/*
 * The README's test command passes on a machine with Node and PostgreSQL alone: no test runs a system
 * program unless it is behind runsWith (test/helpers/system.ts), which skips it outside CI and says why.
 */
const TEST_DIR = path.dirname(new URL(import.meta.url).pathname);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : [],
  );
}

async function twoPagePdf(): Promise<Buffer> {
  const document = new PDFDocument({ size: 'LETTER' });
  const chunks: Buffer[] = [];
  document.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => document.on('end', resolve));
  document.text('Subtotal', 72, 100).text('1,237.48', 400, 100);
  document.text('Balance due', 72, 120).text('994.48', 400, 120);
  document.addPage().text('Invoice INV-0001 (continued)', 72, 72);
  document.end();
  await ended;
  return Buffer.concat(chunks);
}

describe('tests on a fresh machine', () => {
  it('read PDFs in JavaScript: no program on PATH is needed', async () => {
    const pdf = await twoPagePdf();
    const path = process.env.PATH;
    process.env.PATH = '';
    try {
      const pages = await pdfPages(pdf);
      expect(pages).toHaveLength(2);
      expect(pages[0]).toMatch(/^Subtotal 1,237\.48\nBalance due 994\.48$/);
      expect(pages[1]).toBe('Invoice INV-0001 (continued)');
      expect(await pdfText(pdf)).toBe(pages.join('\f'));
    } finally {
      process.env.PATH = path;
    }
  });

  it('start no system program but node and npm, except behind runsWith', () => {
    const found: string[] = [];
    for (const file of sources(TEST_DIR)) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/\b(?:execFile|execFileSync|spawn|spawnSync|exec|execSync)\(\s*'([^']+)'/g)) {
        if (!['node', 'npm'].includes(match[1])) found.push(`${path.relative(TEST_DIR, file)}: ${match[1]}`);
      }
    }
    expect(found).toEqual([]);
    const helpers = readFileSync(path.join(TEST_DIR, 'helpers/documents.ts'), 'utf8');
    expect(helpers).not.toMatch(/pdftotext|child_process/);
  });

  it('guard each test that needs a browser, HAProxy and PgBouncer, or Redis', () => {
    for (const file of ['docs-page.test.ts', 'documents-browser.test.ts', 'scale-out.test.ts', 'helpers/test-cluster.ts']) {
      expect(readFileSync(path.join(TEST_DIR, file), 'utf8'), file).toMatch(/runsWith\(/);
    }
    // The cluster tests take their guard from the cluster helper.
    for (const file of ['cluster.test.ts', 'exactly-once-faults.test.ts']) {
      expect(readFileSync(path.join(TEST_DIR, file), 'utf8'), file).toMatch(/clusterRunnable/);
    }
  });
});
