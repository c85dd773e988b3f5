import { Counter, Histogram, Registry } from 'prom-client'
import type { App } from './app-types.js'

/** Seconds; most requests are one or two indexed queries, so the detail is below 100 ms. */
const durationBuckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

/**
 * `GET /metrics` and the hook that feeds it: request metrics (Prometheus text format). One registry per app, never the
 * global one, so several apps in one process (tests) keep separate counts. Labels use the route
 * pattern (`/api/v0/licenses/:id`), not the URL, so the number of series stays bounded.
 */
export function registerMetrics(app: App): void {
  const registry = new Registry()
  const requests = new Counter({
    name: 'keyturn_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'keyturn_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: durationBuckets,
    registers: [registry],
  })

  app.addHook('onResponse', async (request, reply) => {
    // Unknown routes share one label: URLs sent by scanners must not create series.
    const route = request.routeOptions.url ?? 'unmatched'
    requests.inc({ method: request.method, route, status: String(reply.statusCode) })
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000)
  })

  // Scrapes come every few seconds: log them only when something is wrong.
  app.get('/metrics', { logLevel: 'warn', schema: { hide: true } }, async (_request, reply) => {
    return reply.type(registry.contentType).send(await registry.metrics())
  })
}
