import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type pg from 'pg';
import { onRequestDone } from './request-log.js';

/** Prometheus metrics at /metrics: requests and latency by route and status, pool usage, process stats. */
export const metricsPlugin = fp<{ pool?: pg.Pool }>(
  async (app, { pool }) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route and status.',
      labelNames: ['method', 'route', 'status_code'] as const,
      registers: [registry],
    });
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by method, route and status.',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    if (pool) {
      new Gauge({
        name: 'db_pool_connections',
        help: 'Database pool connections by state.',
        labelNames: ['state'] as const,
        registers: [registry],
        collect() {
          this.set({ state: 'total' }, pool.totalCount);
          this.set({ state: 'idle' }, pool.idleCount);
          this.set({ state: 'waiting' }, pool.waitingCount);
        },
      });
    }

    // The labelled series of each method, route and status, looked up once: a request then only counts.
    const series = new Map<string, { count: () => void; observe: (seconds: number) => void }>();
    onRequestDone(app, (request, reply, outcome) => {
      // The route pattern, never the raw URL, keeps label cardinality bounded.
      const route = request.routeOptions.url ?? 'unmatched';
      const status = String(outcome.status);
      const key = `${request.method} ${status} ${route}`;
      let labelled = series.get(key);
      if (!labelled) {
        const counter = requests.labels(request.method, route, status);
        const histogram = duration.labels(request.method, route, status);
        labelled = { count: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
        series.set(key, labelled);
      }
      labelled.count();
      labelled.observe(reply.elapsedTime / 1000);
    });

    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'metrics' },
);
