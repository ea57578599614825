import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { amountText, dateText, quantityText, TIER_LABELS } from './document-format.js';
import type { CustomerDocument, EstimateDocument, InvoiceDocument } from './document-view.js';

type Pdf = PDFKit.PDFDocument;

type Weight = 'regular' | 'bold';
/** PDF's built-in Helvetica: no font data embedded, but it shows only the WinAnsi (Windows-1252) characters. */
const STANDARD: Record<Weight, string> = { regular: 'Helvetica', bold: 'Helvetica-Bold' };
/** DejaVu Sans, embedded (subset) for text Helvetica cannot show: names and notes in Polish, Greek, Cyrillic, ... */
const UNICODE: Record<Weight, string> = { regular: 'DejaVuSans', bold: 'DejaVuSans-Bold' };
/** The characters of WinAnsiEncoding: Latin-1 and the Windows-1252 additions (euro sign, dashes, quotes, ...). */
const WIN_ANSI = /^[\n\t\x20-\x7e\xa0-\xff€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ]*$/u;

/** The DejaVu Sans files, read on the first document that needs them. */
let unicodeFonts: Record<Weight, Buffer> | undefined;
function unicodeFontData(): Record<Weight, Buffer> {
  const resolve = createRequire(import.meta.url).resolve;
  unicodeFonts ??= {
    regular: readFileSync(resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')),
    bold: readFileSync(resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf')),
  };
  return unicodeFonts;
}

/** The weight each document writes in now; the face is chosen per text (faceFor). */
const weights = new WeakMap<Pdf, Weight>();

function font(doc: Pdf, weight: Weight): Pdf {
  weights.set(doc, weight);
  return doc.font(STANDARD[weight]);
}

/**
 * Sets the face that shows `value` in the current weight: Helvetica when every character is in its set (the
 * layout's own metrics), else DejaVu Sans, so no name or note is ever printed as other characters.
 */
function faceFor(doc: Pdf, value: string): void {
  const weight = weights.get(doc) ?? 'regular';
  if (WIN_ANSI.test(value)) {
    doc.font(STANDARD[weight]);
    return;
  }
  if (!unicodeRegistered.has(doc)) {
    const data = unicodeFontData();
    doc.registerFont(UNICODE.regular, data.regular).registerFont(UNICODE.bold, data.bold);
    unicodeRegistered.add(doc);
  }
  doc.font(UNICODE[weight]);
}
/** Documents that have DejaVu Sans registered under its names (once each, so its subset is embedded once). */
const unicodeRegistered = new WeakSet<Pdf>();

const PAGE = { width: 612, height: 792, margin: 50 };
const CONTENT_WIDTH = PAGE.width - 2 * PAGE.margin;
/** Lowest y a table row may reach; the footer lives below it. */
const BOTTOM = PAGE.height - PAGE.margin - 20;
const INK = '#1a1a1a';
const MUTED = '#555555';
const RULE = '#bbbbbb';

interface Column {
  header: string;
  width: number;
  align: 'left' | 'right';
}

interface Row {
  cells: string[];
}

function text(doc: Pdf, value: string, x: number, y: number, options: PDFKit.Mixins.TextOptions = {}) {
  faceFor(doc, value);
  doc.text(value, x, y, { lineBreak: false, ...options });
}

function header(doc: Pdf, document: CustomerDocument, title: string, facts: Array<[string, string]>) {
  const { company } = document;
  let y = PAGE.margin;
  font(doc, 'bold').fontSize(16).fillColor(INK);
  text(doc, company.name, PAGE.margin, y, { width: 300, ellipsis: true });
  font(doc, 'regular').fontSize(9).fillColor(MUTED);
  y += 22;
  for (const line of [...company.address_lines, company.phone ?? '', company.email].filter(Boolean)) {
    text(doc, line, PAGE.margin, y, { width: 300, ellipsis: true });
    y += 12;
  }

  const right = PAGE.margin + CONTENT_WIDTH - 220;
  font(doc, 'bold').fontSize(20).fillColor(INK);
  text(doc, title.toUpperCase(), right, PAGE.margin, { width: 220, align: 'right' });
  let factY = PAGE.margin + 28;
  doc.fontSize(9);
  for (const [label, value] of facts) {
    font(doc, 'regular').fillColor(MUTED);
    text(doc, label, right, factY, { width: 100 });
    font(doc, 'bold').fillColor(INK);
    text(doc, value, right + 100, factY, { width: 120, align: 'right' });
    factY += 13;
  }

  y = Math.max(y, factY) + 14;
  font(doc, 'bold').fontSize(9).fillColor(MUTED);
  text(doc, document.kind === 'invoice' ? 'BILL TO' : 'PREPARED FOR', PAGE.margin, y);
  text(doc, 'SERVICE ADDRESS', PAGE.margin + 260, y);
  y += 13;
  font(doc, 'regular').fontSize(10).fillColor(INK);
  const address = document.customer.service_address_lines;
  text(doc, document.customer.name, PAGE.margin, y, { width: 250, ellipsis: true });
  let addressY = y;
  for (const line of address.length > 0 ? address : ['-']) {
    text(doc, line, PAGE.margin + 260, addressY, { width: CONTENT_WIDTH - 260, ellipsis: true });
    addressY += 13;
  }
  return Math.max(y + 13, addressY) + 16;
}

function tableHeader(doc: Pdf, columns: Column[], y: number): number {
  doc.rect(PAGE.margin, y, CONTENT_WIDTH, 18).fill('#eeeeee');
  font(doc, 'bold').fontSize(9).fillColor(INK);
  let x = PAGE.margin;
  for (const column of columns) {
    text(doc, column.header, x + 4, y + 5, { width: column.width - 8, align: column.align });
    x += column.width;
  }
  return y + 22;
}

/** The rows, flowing onto new pages with the table header repeated at the top of each. */
function table(doc: Pdf, columns: Column[], rows: Row[], startY: number, continued: string): number {
  let y = tableHeader(doc, columns, startY);
  font(doc, 'regular').fontSize(9.5);
  for (const row of rows) {
    const height =
      Math.max(
        ...row.cells.map((cell, index) => {
          faceFor(doc, cell);
          return doc.heightOfString(cell || ' ', { width: columns[index]!.width - 8 });
        }),
      ) + 6;
    if (y + height > BOTTOM) {
      doc.addPage();
      font(doc, 'regular').fontSize(9).fillColor(MUTED);
      text(doc, continued, PAGE.margin, PAGE.margin);
      y = tableHeader(doc, columns, PAGE.margin + 16);
      font(doc, 'regular').fontSize(9.5);
    }
    let x = PAGE.margin;
    doc.fillColor(INK);
    row.cells.forEach((cell, index) => {
      const column = columns[index]!;
      faceFor(doc, cell);
      doc.text(cell, x + 4, y, { width: column.width - 8, align: column.align });
      x += column.width;
    });
    y += height;
    doc.moveTo(PAGE.margin, y - 3).lineTo(PAGE.margin + CONTENT_WIDTH, y - 3).lineWidth(0.5).strokeColor(RULE).stroke();
  }
  return y + 6;
}

function ensureSpace(doc: Pdf, y: number, needed: number): number {
  if (y + needed <= BOTTOM) return y;
  doc.addPage();
  return PAGE.margin;
}

function totals(doc: Pdf, lines: Array<[string, string, boolean?]>, startY: number): number {
  let y = ensureSpace(doc, startY, lines.length * 15 + 10);
  const x = PAGE.margin + CONTENT_WIDTH - 240;
  for (const [label, value, strong] of lines) {
    font(doc, strong ? 'bold' : 'regular').fontSize(strong ? 11 : 10).fillColor(INK);
    text(doc, label, x, y, { width: 140 });
    text(doc, value, x + 140, y, { width: 100, align: 'right' });
    y += strong ? 17 : 15;
  }
  return y + 10;
}

function section(doc: Pdf, title: string, body: string | null | undefined, startY: number): number {
  if (!body) return startY;
  let y = ensureSpace(doc, startY, 40);
  font(doc, 'bold').fontSize(9).fillColor(MUTED);
  text(doc, title.toUpperCase(), PAGE.margin, y);
  font(doc, 'regular').fontSize(10).fillColor(INK);
  faceFor(doc, body);
  doc.text(body, PAGE.margin, y + 13, { width: CONTENT_WIDTH });
  y = doc.y + 12;
  return y;
}

/** "Page n of m" on every page, written once all pages exist. */
function footers(doc: Pdf, label: string) {
  const range = doc.bufferedPageRange();
  for (let index = range.start; index < range.start + range.count; index++) {
    doc.switchToPage(index);
    const bottom = doc.page.margins.bottom;
    // Writing below the bottom margin would otherwise start a new page.
    doc.page.margins.bottom = 0;
    font(doc, 'regular').fontSize(8).fillColor(MUTED);
    text(doc, `${label} - page ${index + 1} of ${range.count}`, PAGE.margin, PAGE.height - PAGE.margin + 10, {
      width: CONTENT_WIDTH,
      align: 'center',
    });
    doc.page.margins.bottom = bottom;
  }
}

function invoicePdf(doc: Pdf, document: InvoiceDocument) {
  const { invoice } = document;
  const number = invoice.invoice_number ?? '';
  const facts: Array<[string, string]> = [
    ['Invoice number', number],
    ['Issue date', dateText(invoice.issue_date)],
    ['Due date', dateText(invoice.due_date)],
    ['Status', invoice.status],
  ];
  if (invoice.invoice_type !== 'Full') facts.push(['Type', invoice.invoice_type]);
  let y = header(doc, document, 'Invoice', facts);

  const columns: Column[] = [
    { header: 'Description', width: 207, align: 'left' },
    { header: 'Qty', width: 45, align: 'right' },
    { header: 'Unit price', width: 75, align: 'right' },
    { header: 'Tax %', width: 45, align: 'right' },
    { header: 'Tax', width: 60, align: 'right' },
    { header: 'Amount', width: 80, align: 'right' },
  ];
  const rows: Row[] = invoice.line_items
    ? invoice.line_items.map((line) => ({
        cells: [line.description ?? '', quantityText(line.quantity), amountText(line.unit_price), String(line.tax_rate), amountText(line.tax_amount), amountText(line.line_total)],
      }))
    : [
        {
          cells: [
            document.jobTitle ? `Services: ${document.jobTitle}` : 'Services',
            '1',
            amountText(invoice.subtotal),
            '',
            '',
            amountText(invoice.subtotal),
          ],
        },
      ];
  y = table(doc, columns, rows, y, `Invoice ${number} (continued)`);

  const lines: Array<[string, string, boolean?]> = [];
  if (invoice.invoice_type === 'Progress' && invoice.progress_percentage !== null) {
    lines.push(['Progress billed', `${invoice.progress_percentage}%`]);
  }
  lines.push(
    ['Subtotal', amountText(invoice.subtotal)],
    ['Tax', amountText(invoice.tax_amount)],
    ['Discount', `-${amountText(invoice.discount_amount)}`],
    ['Total', amountText(invoice.total_amount), true],
    ['Paid', amountText(invoice.paid_amount)],
    ['Balance due', amountText(invoice.balance_amount), true],
  );
  y = totals(doc, lines, y);
  y = section(doc, 'Notes', invoice.notes, y);
  section(doc, 'Terms', invoice.terms, y);
  return `Invoice ${number}`;
}

function estimatePdf(doc: Pdf, document: EstimateDocument) {
  const { estimate, template, signature } = document;
  const number = estimate.estimate_number ?? '';
  const facts: Array<[string, string]> = [
    ['Estimate number', number],
    ['Date', dateText(estimate.created_at)],
  ];
  if (estimate.expires_at) facts.push(['Valid until', dateText(estimate.expires_at)]);
  facts.push(['Status', estimate.status]);
  let y = header(doc, document, 'Estimate', facts);
  y = section(doc, 'Scope of work', estimate.service_description, y);

  const columns: Column[] = [
    { header: 'Description', width: 332, align: 'left' },
    { header: 'Qty', width: 80, align: 'right' },
    { header: 'Amount', width: 100, align: 'right' },
  ];
  const tier = estimate.selected_tier ? ` - ${TIER_LABELS[estimate.selected_tier]} tier` : '';
  const rows: Row[] = [{ cells: [`${estimate.template_name}${tier}`, quantityText(estimate.quantity), amountText(estimate.base_amount)] }];
  for (const id of estimate.selected_addons ?? []) {
    const addon = template.addons.find((candidate) => candidate.id === id);
    rows.push({ cells: [`Add-on: ${addon?.name ?? id}`, '1', addon ? amountText(addon.price) : ''] });
  }
  y = table(doc, columns, rows, y, `Estimate ${number} (continued)`);

  if (estimate.pricing_type === 'tiered' && template.tiers) {
    const tiers = template.tiers;
    const options = (['good', 'better', 'best'] as const).map((key) => `${TIER_LABELS[key]} ${amountText(tiers[key])}`).join('   ');
    y = section(doc, 'Tier options', options, y);
  }
  const adjustments: Record<string, number | undefined> = estimate.adjustments ?? {};
  const adjusted = Object.entries({ base_amount: 'Base amount', addons_amount: 'Add-ons', tax_amount: 'Tax' })
    .filter(([key]) => adjustments[key] !== undefined)
    .map(([key, label]) => `${label} adjusted to ${amountText(adjustments[key]!)}`);
  y = section(doc, 'Adjustments', adjusted.join('\n'), y);

  y = totals(
    doc,
    [
      ['Base amount', amountText(estimate.base_amount)],
      ['Add-ons', amountText(estimate.addons_amount)],
      ['Tax', amountText(estimate.tax_amount)],
      ['Total', amountText(estimate.total_amount), true],
    ],
    y,
  );
  y = section(doc, 'Notes', estimate.customer_notes, y);
  if (estimate.status === 'Accepted' || estimate.status === 'Declined') {
    const when = dateText(estimate.responded_at);
    const answer =
      estimate.status === 'Accepted'
        ? `Accepted${signature ? ` by ${signature.name}` : ''} on ${when}.`
        : `Declined on ${when}.`;
    section(doc, 'Customer response', [answer, estimate.response_notes].filter(Boolean).join('\n'), y);
  }
  return `Estimate ${number}`;
}

/** The PDF of the current record, laid out like a trade invoice or estimate; amounts from the record's cents. */
export async function renderDocumentPdf(document: CustomerDocument): Promise<Buffer> {
  // Loaded on the first PDF: the layout engine and its fonts would otherwise sit in every instance's memory.
  const { default: PDFDocument } = await import('pdfkit');
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      size: 'LETTER',
      margin: PAGE.margin,
      bufferPages: true,
      info: { Title: document.kind === 'estimate' ? `Estimate ${document.estimate.estimate_number}` : `Invoice ${document.invoice.invoice_number}`, Author: document.company.name },
    });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    try {
      const label = document.kind === 'estimate' ? estimatePdf(doc, document) : invoicePdf(doc, document);
      footers(doc, label);
      doc.end();
    } catch (error) {
      reject(error);
    }
  });
}
