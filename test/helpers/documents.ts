import { getDocumentProxy } from 'unpdf';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** Text items closer than this (in PDF points) vertically sit on one line. */
const LINE_TOLERANCE = 2;

/**
 * The text of each page of a PDF, read in JavaScript (pdf.js through unpdf; no system program), laid out
 * as lines in reading order: the items of one line, left to right, separated by a space. So a label and
 * its amount in the next column read "Total 1,082.50", as the tests match them.
 */
export async function pdfPages(pdf: Uint8Array): Promise<string[]> {
  const document = await getDocumentProxy(new Uint8Array(pdf));
  const pages: string[] = [];
  for (let number = 1; number <= document.numPages; number++) {
    const { items } = await (await document.getPage(number)).getTextContent();
    const lines: Array<{ y: number; parts: Array<{ x: number; text: string }> }> = [];
    for (const item of items) {
      if (!('str' in item) || item.str.trim() === '') continue;
      const [x, y] = [item.transform[4] as number, item.transform[5] as number];
      let line = lines.find((candidate) => Math.abs(candidate.y - y) <= LINE_TOLERANCE);
      if (!line) lines.push((line = { y, parts: [] }));
      line.parts.push({ x, text: item.str });
    }
    lines.sort((a, b) => b.y - a.y);
    pages.push(lines.map((line) => line.parts.sort((a, b) => a.x - b.x).map((part) => part.text.trim()).join(' ')).join('\n'));
  }
  await document.destroy();
  return pages.filter((page) => page.trim() !== '');
}

/** The whole text of a PDF, pages separated by a form feed. */
export async function pdfText(pdf: Uint8Array): Promise<string> {
  return (await pdfPages(pdf)).join('\f');
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
