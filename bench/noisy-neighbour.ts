/**
 * X1, the noisy neighbour: company B's W2 (a customer GET by uuid) while four clients of company A render a
 * 1,000-line invoice PDF in a loop, against B's W2 alone on the same server just before. Run on a server of
 * its own with PDF_CACHE_BYTES=0, so every PDF request renders (bench/README.md).
 */
import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon';
import { createDatabase } from '../src/db/client.js';
import { createCompany } from '../src/modules/admin/provisioning.service.js';

export interface NoisyNeighbourResult {
  alone: { rps: number; p50: number; p99: number; errors: number };
  noisy: { rps: number; p50: number; p99: number; errors: number };
  pdf: { rps: number; p50: number; p99: number; errors: number; statuses: string };
  /** B's p99 under the noise over B's p99 alone (mark: at most 2). */
  ratio: number;
}

interface Options {
  url: string;
  databaseUrl: string;
  /** Company A: the large company's key, whose jobs and customers the invoice is made for. */
  apiKey: string;
  job: { uuid: string; customer: string };
  connections: number;
  duration: number;
  warmup: number;
  log: (line: string) => void;
}

const PDF_CLIENTS = 4;
const CUSTOMERS_OF_B = 200;

async function api(url: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

function summary(result: AutocannonResult) {
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

export async function measureNoisyNeighbour(options: Options): Promise<NoisyNeighbourResult> {
  const { url, log } = options;
  // Company B: a company of its own with a few hundred customers, made through the API.
  const database = await createDatabase({ DATABASE_URL: options.databaseUrl, DATA_DIR: 'memory://', DATABASE_POOL_SIZE: 2, STATEMENT_TIMEOUT_MS: 0 });
  let keyOfB: string;
  try {
    const created = await createCompany(database.db, { name: `Bench Neighbour ${Date.now()}`, email: `neighbour${Date.now()}@bench.example.com` });
    keyOfB = created.api_key;
  } finally {
    await database.close();
  }
  const customersOfB: string[] = [];
  for (let index = 0; index < CUSTOMERS_OF_B; index++) {
    const created = await api(url, keyOfB, 'POST', '/api/v1/customers', { first_name: 'Neighbour', last_name: `Customer${index}` });
    customersOfB.push(created.data.uuid);
  }
  // Company A's invoice: 1,000 line items.
  const lineItems = Array.from({ length: 1000 }, (_, index) => ({
    description: `Line ${index + 1}: replacement part, labour and disposal of the old unit`,
    quantity: 1 + (index % 3),
    unit_price: 10 + (index % 50),
    tax_rate: 8.25,
  }));
  const invoice = await api(url, options.apiKey, 'POST', '/api/v1/invoices', {
    job_uuid: options.job.uuid,
    customer_uuid: options.job.customer,
    due_date: new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10),
    line_items: lineItems,
  });
  const pdfPath = `/api/v1/invoices/${invoice.data.uuid}/pdf`;
  log(`X1: company B with ${CUSTOMERS_OF_B} customers; company A's invoice ${invoice.data.invoice_number} with 1,000 lines`);

  const pick = () => customersOfB[Math.floor(Math.random() * customersOfB.length)];
  const getOfB: AutocannonRequest = {
    method: 'GET',
    headers: { authorization: `Bearer ${keyOfB}` },
    setupRequest: (request: AutocannonRequest) => ({ ...request, path: `/api/v1/customers/${pick()}` }),
  };
  const w2 = (duration: number) => autocannon({ url, connections: options.connections, duration, timeout: 30, requests: [getOfB] });

  /** PDF_CLIENTS clients, each asking for the PDF again as soon as it has the last one, until stopped. */
  const pdfLoop = () => {
    let stopped = false;
    const latencies: number[] = [];
    const statuses = new Map<number, number>();
    const client = async () => {
      while (!stopped) {
        const started = performance.now();
        const response = await fetch(`${url}${pdfPath}`, { headers: { authorization: `Bearer ${options.apiKey}` } });
        await response.arrayBuffer();
        latencies.push(performance.now() - started);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }
    };
    const started = performance.now();
    const running = Promise.all(Array.from({ length: PDF_CLIENTS }, client));
    return {
      async stop() {
        stopped = true;
        await running;
        const seconds = (performance.now() - started) / 1000;
        latencies.sort((a, b) => a - b);
        const at = (q: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] : 0);
        const errors = [...statuses].filter(([status]) => status >= 300).reduce((sum, [, count]) => sum + count, 0);
        return {
          rps: latencies.length / seconds,
          p50: at(0.5),
          p99: at(0.99),
          errors,
          statuses: [...statuses].map(([status, count]) => `${status}: ${count}`).join(', '),
        };
      },
    };
  };

  if (options.warmup > 0) await w2(options.warmup);
  const alone = summary(await w2(options.duration));
  // The PDF clients start first (the first renders are under way when B's run starts) and stop after it.
  const noise = pdfLoop();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const noisy = summary(await w2(options.duration));
  const pdf = await noise.stop();
  const ratio = alone.p99 > 0 ? noisy.p99 / alone.p99 : Number.NaN;
  return { alone, noisy, pdf, ratio };
}
