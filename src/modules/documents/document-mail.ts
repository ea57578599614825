import type { createTransport as CreateTransport } from 'nodemailer';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { dateText, dollars } from './document-format.js';
import type { CustomerDocument } from './document-view.js';
import type { ShareLink } from './documents.schemas.js';
import { escapeHtml } from './share-page.js';

export interface OutgoingDocument {
  to: string;
  cc: string[];
  message: string | null;
  link: ShareLink;
  pdf: Buffer;
  filename: string;
}

interface MailContent {
  subject: string;
  intro: string;
  action: string;
  facts: Array<[string, string]>;
}

function contentOf(document: CustomerDocument): MailContent {
  const from = document.company.name;
  if (document.kind === 'estimate') {
    const { estimate } = document;
    return {
      subject: `Estimate ${estimate.estimate_number ?? ''} from ${from}`.replace(/\s+/g, ' '),
      intro: `${from} has sent you an estimate for ${estimate.template_name}.`,
      action: 'Review and accept or decline your estimate',
      facts: [
        ['Estimate', estimate.estimate_number ?? ''],
        ['Total', dollars(estimate.total_amount)],
        ...(estimate.expires_at ? ([['Valid until', dateText(estimate.expires_at)]] as Array<[string, string]>) : []),
      ],
    };
  }
  const { invoice } = document;
  return {
    subject: `Invoice ${invoice.invoice_number ?? ''} from ${from}`.replace(/\s+/g, ' '),
    intro: `${from} has sent you an invoice.`,
    action: 'View your invoice',
    facts: [
      ['Invoice', invoice.invoice_number ?? ''],
      ['Total', dollars(invoice.total_amount)],
      ['Balance due', dollars(invoice.balance_amount)],
      ['Due date', dateText(invoice.due_date)],
    ],
  };
}

function textBody(document: CustomerDocument, content: MailContent, outgoing: OutgoingDocument): string {
  return [
    content.intro,
    ...(outgoing.message ? ['', outgoing.message] : []),
    '',
    ...content.facts.map(([label, value]) => `${label}: ${value}`),
    '',
    `${content.action}:`,
    outgoing.link.url,
    '',
    `The ${document.kind} is attached as a PDF. Reply to this email to reach ${document.company.name}.`,
    '',
    document.company.name,
    ...document.company.address_lines,
    ...(document.company.phone ? [document.company.phone] : []),
    document.company.email,
  ].join('\n');
}

function htmlBody(document: CustomerDocument, content: MailContent, outgoing: OutgoingDocument): string {
  const e = escapeHtml;
  const facts = content.facts
    .map(([label, value]) => `<tr><td style="padding:2px 12px 2px 0;color:#444">${e(label)}</td><td style="padding:2px 0"><strong>${e(value)}</strong></td></tr>`)
    .join('');
  const message = outgoing.message
    ? `<p style="white-space:pre-wrap">${e(outgoing.message)}</p>`
    : '';
  return `<!doctype html><html lang="en"><body style="font-family:Arial,Helvetica,sans-serif;color:#1a1a1a;line-height:1.5">
<p>${e(content.intro)}</p>${message}
<table role="presentation">${facts}</table>
<p><a href="${e(outgoing.link.url)}" style="display:inline-block;background:#0b5394;color:#ffffff;padding:10px 16px;border-radius:4px;text-decoration:none">${e(content.action)}</a></p>
<p style="font-size:13px;color:#444">Or open this link: <a href="${e(outgoing.link.url)}">${e(outgoing.link.url)}</a><br>The ${document.kind} is attached as a PDF.</p>
<p style="font-size:13px;color:#444">${[document.company.name, ...document.company.address_lines, document.company.phone ?? '', document.company.email]
    .filter(Boolean)
    .map(e)
    .join('<br>')}</p>
</body></html>`;
}

/**
 * Sends through SMTP_URL; any failure of the SMTP server is 503 service_unavailable. With `deliver: false`
 * (the sandbox) the message is built the same way but goes nowhere: no connection is made.
 */
export async function sendDocumentEmail(
  config: Pick<Config, 'SMTP_URL' | 'MAIL_FROM'>,
  document: CustomerDocument,
  outgoing: OutgoingDocument,
  options: { deliver: boolean } = { deliver: true },
): Promise<{ messageId: string; sentAt: Date }> {
  const content = contentOf(document);
  // Loaded on the first email, like the PDF layout: most instances never send one.
  const { createTransport } = await import('nodemailer');
  const transport = createTransport(
    (options.deliver
      ? {
          url: config.SMTP_URL,
          // A slow or silent server fails the request instead of holding it for minutes.
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000,
        }
      : { jsonTransport: true }) as Parameters<typeof CreateTransport>[0],
  );
  try {
    const info = await transport.sendMail({
      from: { name: document.company.name, address: config.MAIL_FROM ?? document.company.email },
      replyTo: { name: document.company.name, address: document.company.email },
      to: outgoing.to,
      cc: outgoing.cc.length > 0 ? outgoing.cc : undefined,
      subject: content.subject,
      text: textBody(document, content, outgoing),
      html: htmlBody(document, content, outgoing),
      attachments: [{ filename: outgoing.filename, content: outgoing.pdf, contentType: 'application/pdf' }],
    });
    return { messageId: String(info.messageId), sentAt: new Date() };
  } catch (error) {
    throw Object.assign(new AppError('service_unavailable', 'The email could not be sent: the mail server did not accept it. Nothing was changed.'), {
      cause: error,
    });
  } finally {
    transport.close();
  }
}
