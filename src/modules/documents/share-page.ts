import type { ErrorDetail } from '../../errors.js';
import { dateText, dollars, quantityText, TIER_LABELS } from './document-format.js';
import type { CompanyBlock, CustomerBlock, EstimateDocument, InvoiceDocument } from './document-view.js';

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const e = escapeHtml;

/** Inline styles only (the CSP allows the one style element by nonce); readable from 320 px up. */
const STYLE = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f4f5f7;color:#1a1a1a;font:16px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{max-width:760px;margin:0 auto;padding:16px}
.card{background:#fff;border:1px solid #d0d4da;border-radius:8px;padding:16px;margin:0 0 16px}
h1{font-size:1.5rem;margin:0 0 4px}h2{font-size:1.15rem;margin:0 0 12px}
p{margin:0 0 8px}
.muted{color:#4a4f57}
.company{font-weight:700;font-size:1.1rem}
.grid{display:grid;grid-template-columns:1fr;gap:12px}
@media (min-width:600px){.grid{grid-template-columns:1fr 1fr}}
.label{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:#4a4f57;font-weight:700;margin:0}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:8px 4px;border-bottom:1px solid #e1e4e8;vertical-align:top;overflow-wrap:anywhere}
th{font-size:.8rem;text-transform:uppercase;color:#4a4f57}
.num{text-align:right;white-space:nowrap}
.totals td{border:0;padding:4px}
.totals .grand td{font-weight:700;font-size:1.1rem;border-top:2px solid #1a1a1a}
.status{display:inline-block;padding:2px 10px;border-radius:999px;background:#e8eef7;color:#0b3d6e;font-weight:700;font-size:.9rem}
.outcome{border-left:6px solid #1e7b34;background:#eaf6ec;padding:12px 16px;border-radius:4px;margin:0 0 16px}
.outcome.declined{border-color:#8a1c1c;background:#fbecec}
.error{border-left:6px solid #8a1c1c;background:#fbecec;padding:12px 16px;border-radius:4px;margin:0 0 16px}
fieldset{border:1px solid #d0d4da;border-radius:6px;margin:0 0 16px;padding:8px 12px}
legend{font-weight:700;padding:0 4px}
.choice{display:flex;gap:10px;align-items:flex-start;padding:8px 0;cursor:pointer}
.choice input{width:22px;height:22px;margin:2px 0 0;flex:none}
.choice span{flex:1}
label.field{display:block;font-weight:700;margin:0 0 4px}
input[type=text],textarea{display:block;width:100%;font:inherit;padding:10px;border:1px solid #6b7280;border-radius:6px;margin:0 0 16px;background:#fff;color:#1a1a1a}
textarea{min-height:80px;resize:vertical}
button{font:inherit;font-weight:700;padding:12px 20px;border-radius:6px;border:2px solid #0b5394;background:#0b5394;color:#fff;cursor:pointer;width:100%}
button.secondary{background:#fff;color:#8a1c1c;border-color:#8a1c1c}
@media (min-width:600px){button{width:auto}}
a{color:#0b5394}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.pdf{display:inline-block;margin:4px 0 0}
`;

export interface PageOptions {
  /** The page's own path (/share/estimates/<token>); forms post below it. */
  path: string;
  /** The page's absolute URL (the share link); its PDF is <url>/pdf (DECISIONS §10). */
  url: string;
  nonce: string;
  error?: { message: string; details?: ErrorDetail[] };
  /** What the customer entered, kept when the form is shown again with an error. */
  values?: Record<string, unknown>;
}

function layout(title: string, nonce: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${e(title)}</title>
<style nonce="${e(nonce)}">${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

function companyCard(company: CompanyBlock, customer: CustomerBlock, heading: string, status: string, dates: Array<[string, string]>): string {
  const contact = [...company.address_lines, company.phone ?? '', company.email].filter(Boolean).map(e).join('<br>');
  const address = customer.service_address_lines.map(e).join('<br>');
  const dateRows = dates
    .filter(([, value]) => value)
    .map(([label, value]) => `<p><span class="muted">${e(label)}:</span> ${e(value)}</p>`)
    .join('');
  return `<header class="card">
<p class="company">${e(company.name)}</p>
<p class="muted">${contact}</p>
</header>
<section class="card" aria-labelledby="doc-title">
<h1 id="doc-title">${e(heading)}</h1>
<p><span class="status">${e(status)}</span></p>
${dateRows}
<div class="grid">
<div><p class="label">Customer</p><p>${e(customer.name)}</p></div>
${address ? `<div><p class="label">Service address</p><p>${address}</p></div>` : ''}
</div>
</section>`;
}

function errorBox(options: PageOptions): string {
  if (!options.error) return '';
  const details = (options.error.details ?? []).map((detail) => `<li>${e(detail.field)}: ${e(detail.message)}</li>`).join('');
  return `<div class="error" role="alert"><p><strong>${e(options.error.message)}</strong></p>${details ? `<ul>${details}</ul>` : ''}</div>`;
}

function totalsTable(lines: Array<[string, string, boolean?]>): string {
  return `<table class="totals" aria-label="Totals"><tbody>${lines
    .map(([label, value, grand]) => `<tr${grand ? ' class="grand"' : ''}><td>${e(label)}</td><td class="num">${e(value)}</td></tr>`)
    .join('')}</tbody></table>`;
}

function stringValue(values: Record<string, unknown> | undefined, name: string): string {
  const value = values?.[name];
  return typeof value === 'string' ? value : '';
}

function estimateForms(document: EstimateDocument, options: PageOptions): string {
  const { estimate, template } = document;
  const values = options.values;
  const chosenTier = (stringValue(values, 'selected_tier') || estimate.selected_tier) ?? '';
  const sentAddons = values?.selected_addons;
  const chosenAddons = new Set<string>(
    values ? (Array.isArray(sentAddons) ? sentAddons.map(String) : typeof sentAddons === 'string' ? [sentAddons] : []) : (estimate.selected_addons ?? []),
  );
  const perUnit = estimate.quantity === 1 ? '' : ` each (quantity ${quantityText(estimate.quantity)})`;
  const tiers =
    estimate.pricing_type === 'tiered' && template.tiers
      ? `<fieldset><legend>Choose an option</legend>${(['good', 'better', 'best'] as const)
          .map(
            (tier) =>
              `<label class="choice"><input type="radio" name="selected_tier" value="${tier}" required${tier === chosenTier ? ' checked' : ''}><span>${TIER_LABELS[tier]}: ${e(dollars(template.tiers![tier]))}${e(perUnit)}</span></label>`,
          )
          .join('')}</fieldset>`
      : '';
  const addons =
    template.addons.length > 0
      ? `<fieldset><legend>Add-ons (optional)</legend>${template.addons
          .map(
            (addon, index) =>
              `<label class="choice" for="addon-${index}"><input type="checkbox" id="addon-${index}" name="selected_addons" value="${e(addon.id)}"${chosenAddons.has(addon.id) ? ' checked' : ''}><span>${e(addon.name)}: ${e(dollars(addon.price))}</span></label>`,
          )
          .join('')}</fieldset>`
      : '';
  const note = tiers || addons ? '<p class="muted">The total is recalculated with your choices (and tax) when you accept.</p>' : '';
  return `<section class="card" aria-labelledby="accept-title">
<h2 id="accept-title">Accept this estimate</h2>
<form method="post" action="${e(options.path)}/accept">
${tiers}${addons}${note}
<label class="field" for="signature_name">Your full name (signature)</label>
<input type="text" id="signature_name" name="signature_name" autocomplete="name" required maxlength="200" value="${e(stringValue(values, 'signature_name'))}">
<label class="field" for="accept_notes">Notes for us (optional)</label>
<textarea id="accept_notes" name="response_notes" maxlength="5000">${e(stringValue(values, 'response_notes'))}</textarea>
<button type="submit">Accept estimate</button>
</form>
</section>
<section class="card" aria-labelledby="decline-title">
<h2 id="decline-title">Not going ahead?</h2>
<form method="post" action="${e(options.path)}/decline">
<label class="field" for="decline_notes">Reason (optional)</label>
<textarea id="decline_notes" name="response_notes" maxlength="5000"></textarea>
<button type="submit" class="secondary">Decline estimate</button>
</form>
</section>`;
}

function estimateOutcome(document: EstimateDocument): string {
  const { estimate, signature } = document;
  const when = dateText(estimate.responded_at);
  const notes = estimate.response_notes ? `<p>Your note: ${e(estimate.response_notes)}</p>` : '';
  switch (estimate.status) {
    case 'Accepted':
      return `<div class="outcome" role="status"><p><strong>You accepted this estimate on ${e(when)}${signature ? `, signed by ${e(signature.name)}` : ''}.</strong> Thank you! ${e(document.company.name)} will be in touch to schedule the work.</p>${notes}</div>`;
    case 'Declined':
      return `<div class="outcome declined" role="status"><p><strong>You declined this estimate on ${e(when)}.</strong></p>${notes}</div>`;
    case 'Expired':
      return `<div class="outcome declined" role="status"><p><strong>This estimate has expired.</strong> Contact ${e(document.company.name)} for a new one.</p></div>`;
    default:
      return '';
  }
}

export function estimatePage(document: EstimateDocument, options: PageOptions): string {
  const { estimate, template } = document;
  const number = estimate.estimate_number ?? '';
  const tier = estimate.selected_tier ? ` (${TIER_LABELS[estimate.selected_tier]})` : '';
  const rows = [
    `<tr><td>${e(estimate.template_name + tier)}</td><td class="num">${e(quantityText(estimate.quantity))}</td><td class="num">${e(dollars(estimate.base_amount))}</td></tr>`,
    ...(estimate.selected_addons ?? []).map((id) => {
      const addon = template.addons.find((candidate) => candidate.id === id);
      return `<tr><td>Add-on: ${e(addon?.name ?? id)}</td><td class="num">1</td><td class="num">${addon ? e(dollars(addon.price)) : ''}</td></tr>`;
    }),
  ].join('');
  const adjustments: Record<string, number | undefined> = estimate.adjustments ?? {};
  const adjusted = Object.entries({ base_amount: 'Base amount', addons_amount: 'Add-ons', tax_amount: 'Tax' })
    .filter(([key]) => adjustments[key] !== undefined)
    .map(([key, label]) => `<li>${e(label)} adjusted to ${e(dollars(adjustments[key]!))}</li>`)
    .join('');
  const body = `${companyCard(document.company, document.customer, `Estimate ${number}`, estimate.status, [
    ['Date', dateText(estimate.created_at)],
    ['Valid until', dateText(estimate.expires_at)],
  ])}
${estimateOutcome(document)}${errorBox(options)}
<section class="card" aria-labelledby="items-title">
<h2 id="items-title">${e(estimate.template_name)}</h2>
${estimate.service_description ? `<p>${e(estimate.service_description)}</p>` : ''}
<table><thead><tr><th scope="col">Item</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Amount</th></tr></thead><tbody>${rows}</tbody></table>
${adjusted ? `<p class="label">Adjustments</p><ul>${adjusted}</ul>` : ''}
${totalsTable([
  ['Base amount', dollars(estimate.base_amount)],
  ['Add-ons', dollars(estimate.addons_amount)],
  ['Tax', dollars(estimate.tax_amount)],
  ['Total', dollars(estimate.total_amount), true],
])}
${estimate.customer_notes ? `<p class="label">Notes</p><p>${e(estimate.customer_notes)}</p>` : ''}
<p><a class="pdf" href="${e(options.url)}/pdf">Download the PDF of estimate ${e(number)}</a></p>
</section>
${estimate.status === 'Pending' ? estimateForms(document, options) : ''}`;
  return layout(`Estimate ${number} from ${document.company.name}`, options.nonce, body);
}

export function invoicePage(document: InvoiceDocument, options: PageOptions): string {
  const { invoice } = document;
  const number = invoice.invoice_number ?? '';
  const lines = invoice.line_items ?? [
    { description: document.jobTitle ? `Services: ${document.jobTitle}` : 'Services', quantity: 1, unit_price: invoice.subtotal, tax_amount: null, line_total: invoice.subtotal },
  ];
  const rows = lines
    .map(
      (line) =>
        `<tr><td>${e(line.description ?? '')}</td><td class="num">${e(quantityText(line.quantity))}</td><td class="num">${e(dollars(line.unit_price))}</td>` +
        `<td class="num">${line.tax_amount === null ? '' : e(dollars(line.tax_amount))}</td><td class="num">${e(dollars(line.line_total))}</td></tr>`,
    )
    .join('');
  const body = `${companyCard(document.company, document.customer, `Invoice ${number}`, invoice.status, [
    ['Issue date', dateText(invoice.issue_date)],
    ['Due date', dateText(invoice.due_date)],
  ])}
<section class="card" aria-labelledby="items-title">
<h2 id="items-title">Details</h2>
<table><thead><tr><th scope="col">Description</th><th scope="col" class="num">Qty</th><th scope="col" class="num">Unit price</th><th scope="col" class="num">Tax</th><th scope="col" class="num">Amount</th></tr></thead><tbody>${rows}</tbody></table>
${totalsTable([
  ['Subtotal', dollars(invoice.subtotal)],
  ['Tax', dollars(invoice.tax_amount)],
  ['Discount', `-${dollars(invoice.discount_amount)}`],
  ['Total', dollars(invoice.total_amount), true],
  ['Paid', dollars(invoice.paid_amount)],
  ['Balance due', dollars(invoice.balance_amount), true],
])}
${invoice.notes ? `<p class="label">Notes</p><p>${e(invoice.notes)}</p>` : ''}
${invoice.terms ? `<p class="label">Terms</p><p>${e(invoice.terms)}</p>` : ''}
<p><a class="pdf" href="${e(options.url)}/pdf">Download the PDF of invoice ${e(number)}</a></p>
</section>`;
  return layout(`Invoice ${number} from ${document.company.name}`, options.nonce, body);
}

export function notFoundPage(nonce: string): string {
  return layout(
    'Link not available',
    nonce,
    `<section class="card"><h1>This link is not available</h1><p>It may have expired or been replaced. Ask the company that sent it for a new link.</p></section>`,
  );
}

export function rateLimitedPage(nonce: string): string {
  return layout(
    'Too many requests',
    nonce,
    `<section class="card"><h1>Too many requests</h1><p>This page was opened too often from your network in the last minute. Wait a minute, then reload it.</p></section>`,
  );
}

export function busyPage(nonce: string): string {
  return layout(
    'Busy',
    nonce,
    `<section class="card"><h1>Please try again in a moment</h1><p>This page could not be prepared right now. Reload it in a few seconds.</p></section>`,
  );
}
