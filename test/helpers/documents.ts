import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

const scratch = mkdtempSync(path.join(tmpdir(), 'crm-documents-'));
let files = 0;

/** The text of a PDF as pdftotext (poppler-utils) lays it out; pages are separated by a form feed. */
export function pdfText(pdf: Buffer): string {
  const file = path.join(scratch, `doc-${++files}.pdf`);
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
}

export function pdfPages(pdf: Buffer): string[] {
  return pdfText(pdf)
    .split('\f')
    .filter((page) => page.trim() !== '');
}

export interface MailSink {
  url: string;
  messages: ParsedMail[];
  /** Makes the server refuse every message while set. */
  refuse: boolean;
  close(): Promise<void>;
}

/** An SMTP server on a free local port that keeps every message it receives, parsed. */
export async function startMailSink(): Promise<MailSink> {
  const sink = { messages: [] as ParsedMail[], refuse: false } as MailSink;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      if (sink.refuse) {
        stream.resume();
        stream.on('end', () => callback(Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 })));
        return;
      }
      simpleParser(stream)
        .then((parsed) => {
          sink.messages.push(parsed);
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  sink.url = `smtp://127.0.0.1:${port}`;
  sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sink;
}

/** The first URL in a text that points at a share page. */
export function shareUrlIn(text: string): string {
  const match = /https?:\/\/\S+\/share\/(?:estimates|invoices)\/[A-Za-z0-9_.-]+/.exec(text);
  if (!match) throw new Error(`no share link in: ${text}`);
  return match[0];
}
