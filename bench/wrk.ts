/**
 * A second load generator for the read scenarios whose answers are large. autocannon parses every answer in
 * JavaScript, on the same two cores as the server, and its cost grows with the bytes: an E1 page is 92 KB
 * against W1's 33 KB. wrk (Debian package `wrk`, written in C) reads them for a fraction of that, so the
 * pairs E1/W1 and V1/W2 through wrk show the server's own ratios. Optional: without wrk the comparison is skipped.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AutocannonRequest } from 'autocannon';
import { findProgram } from '../scripts/local-cluster.js';

/**
 * The pairs measured through wrk too: a scenario with large answers against the one its mark is set by.
 * E1's feed page is 92 KB against W1's 33 KB; V1's week of visits about 19 KB against W2's one customer.
 */
export const WRK_PAIRS = [
  { scenario: 'E1', base: 'W1', mark: 1 },
  { scenario: 'V1', base: 'W2', mark: 0.5 },
] as const;

export interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** How many request paths are drawn from the scenario beforehand; wrk picks one at random per request. */
const PATHS = 2_000;

const luaString = (value: string) => JSON.stringify(value);

/** The wrk script: GET a random one of the drawn paths with the scenario's headers. */
function script(request: AutocannonRequest): string {
  const paths: string[] = [];
  for (let index = 0; index < PATHS; index++) {
    const drawn = request.setupRequest ? request.setupRequest({ ...request }, {}) : request;
    paths.push(drawn.path ?? '/');
  }
  const headers = Object.entries(request.headers ?? {})
    .map(([name, value]) => `[${luaString(name)}] = ${luaString(String(value))}`)
    .join(', ');
  return [
    `local paths = { ${paths.map(luaString).join(', ')} }`,
    `local headers = { ${headers} }`,
    'local seeded = false',
    'request = function()',
    '  if not seeded then math.randomseed(os.time() + math.floor(os.clock() * 1000000)); seeded = true end',
    '  return wrk.format("GET", paths[math.random(#paths)], headers)',
    'end',
    '',
  ].join('\n');
}

/** Milliseconds from wrk's latency notation (`850.00us`, `12.34ms`, `1.20s`). */
function toMs(value: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (!match) return Number.NaN;
  const amount = Number(match[1]);
  return { us: amount / 1000, ms: amount, s: amount * 1000, m: amount * 60_000 }[match[2] as 'us' | 'ms' | 's' | 'm'];
}

export function wrkInstalled(): boolean {
  return findProgram('wrk') !== null;
}

/** The scenario's GET through wrk: 2 threads, `connections` connections, `seconds` long. */
export async function runWrk(url: string, request: AutocannonRequest, connections: number, seconds: number): Promise<WrkResult> {
  if ((request.method ?? 'GET') !== 'GET') throw new Error('wrk runs GET scenarios only');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crm-bench-wrk-'));
  try {
    const file = path.join(dir, 'scenario.lua');
    writeFileSync(file, script(request));
    const args = ['-t2', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', file, url];
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(findProgram('wrk')!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}: ${text.trim()}`))));
    });
    const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? Number.NaN);
    const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
    return {
      rps: number(/Requests\/sec:\s+([\d.]+)/),
      p50: toMs(/^\s+50%\s+(\S+)/m.exec(output)?.[1] ?? ''),
      p99: toMs(/^\s+99%\s+(\S+)/m.exec(output)?.[1] ?? ''),
      errors:
        (Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1]) || 0) +
        (socketErrors ? socketErrors.slice(1).reduce((sum, count) => sum + Number(count), 0) : 0),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
