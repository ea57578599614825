import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { findProgram } from '../../scripts/local-cluster.js';

/** CI (CI=true) installs every program and service the tests use (.ci/run); a missing one fails there. */
export const inCi = ['true', '1'].includes(String(process.env.CI).toLowerCase());

/** The first of these browser binaries that exists, if any (Debian's chromium; puppeteer downloads nothing). */
export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((candidate) => existsSync(candidate)) ??
  findProgram('chromium') ??
  undefined;

/**
 * Whether the tests that need something besides Node and PostgreSQL run here: in CI always, elsewhere when
 * it is present. A skip is never silent: it prints what is missing and how to get it.
 */
export function runsWith(what: string, present: boolean, howToGet: string): boolean {
  if (present || inCi) return true;
  process.stderr.write(`Skipped here: these tests need ${what}, which this machine lacks (${howToGet}); CI installs it and runs them.\n`);
  return false;
}

/** Whether something listens at the host and port of a URL (e.g. redis://127.0.0.1:6379), within a second. */
export function listening(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
