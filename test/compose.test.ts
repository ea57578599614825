import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { findProgram } from '../scripts/local-cluster.js';

/**
 * docker-compose.yml read as a reviewer would (no Docker engine needed): restart policies, nothing private
 * published beyond 127.0.0.1, no shared network namespace, pinned images, one API image, required secrets.
 */
const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), '..');
const text = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
type Service = {
  image?: string;
  build?: unknown;
  restart?: string;
  ports?: string[];
  network_mode?: string;
  environment?: Record<string, string>;
  pull_policy?: string;
};
const compose = parse(text, { merge: true }) as { services: Record<string, Service> };
const services = Object.entries(compose.services);

describe('docker-compose.yml', () => {
  it('restarts every long-running service; the one-shot bucket maker does not', () => {
    for (const [name, service] of services) {
      expect(service.restart, name).toBe(name === 'create-bucket' ? 'no' : 'unless-stopped');
    }
  });

  it('publishes the API only; MinIO on 127.0.0.1 alone; the database, pooler and Redis not at all', () => {
    const published = Object.fromEntries(services.filter(([, service]) => service.ports).map(([name, service]) => [name, service.ports]));
    expect(published).toEqual({ haproxy: ['3000:3000'], minio: ['127.0.0.1:9000:9000'] });
  });

  it('shares no network namespace: every service is on the compose network', () => {
    expect(text).not.toMatch(/network_mode/);
    expect(compose.services.api1.environment?.S3_ENDPOINT).toBe('http://minio:9000');
    expect(compose.services.api1.environment?.S3_PUBLIC_ENDPOINT).toBe('http://localhost:9000');
  });

  it('pins every image to a version', () => {
    const fromLines = (file: string) => [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/^FROM\s+(\S+)/gm)];
    const images = [...text.matchAll(/^\s*image:\s*(\S+)/gm), ...fromLines('Dockerfile'), ...fromLines('deploy/pgbouncer.Dockerfile')].map((match) => match[1]);
    const external = images.filter((image) => !image.endsWith(':local'));
    expect(external.length).toBe(8);
    for (const image of external) expect(image, image).toMatch(/:(?:\d+\.\d+(?:\.\d+)?(?:-[\w.]+)?|RELEASE\.[\dT-]+Z)$/);
  });

  it('builds the API image once and runs it three times', () => {
    const apis = services.filter(([name]) => /^api\d$/.test(name));
    expect(apis.map(([name]) => name)).toEqual(['api1', 'api2', 'api3']);
    expect(new Set(apis.map(([, service]) => service.image))).toEqual(new Set(['field-service-crm-api:local']));
    expect(apis.filter(([, service]) => service.build !== undefined).map(([name]) => name)).toEqual(['api1']);
    expect(apis.slice(1).every(([, service]) => service.pull_policy === 'never')).toBe(true);
  });

  it('requires its secrets rather than defaulting them', () => {
    for (const secret of ['POSTGRES_PASSWORD', 'MINIO_ROOT_USER', 'MINIO_ROOT_PASSWORD', 'PHOTO_URL_SECRET']) {
      const uses = [...text.matchAll(new RegExp(`\\$\\{${secret}([^}]*)\\}`, 'g'))];
      expect(uses.length, secret).toBeGreaterThan(0);
      for (const use of uses) expect(use[1], secret).toMatch(/^:\?/);
    }
    expect(text).not.toMatch(/minioadmin|change-me|password=postgres/);
    expect(readFileSync(path.join(ROOT, 'deploy/pgbouncer.ini'), 'utf8')).not.toMatch(/password=(?!@POSTGRES_PASSWORD@)/);
  });

  it('keeps .env out of the image', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['.env', '.env.*']));
  });

  const composeCli = findProgram('docker-compose');
  it.runIf(composeCli)('is a valid compose file, and says which secret is missing (docker-compose config)', () => {
    const env = { PATH: process.env.PATH ?? '' };
    const valid = execFileSync(composeCli!, ['config', '--quiet'], {
      cwd: ROOT,
      env: { ...env, POSTGRES_PASSWORD: 'p', MINIO_ROOT_USER: 'u', MINIO_ROOT_PASSWORD: 'password', PHOTO_URL_SECRET: 's' },
      stdio: 'pipe',
    });
    expect(valid.toString()).toBe('');
    expect(() => execFileSync(composeCli!, ['config', '--quiet'], { cwd: ROOT, env, stdio: 'pipe' })).toThrow(/set POSTGRES_PASSWORD in \.env/);
  });
});
