import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client'
import type { App } from './app-types.js'

/** Seconds; most requests are one or two indexed queries, so the detail is below 100 ms. */
const durationBuckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

/** The operations the business counters watch, by operationId (the /v0 paths share them). */
const validations = new Set(['validateLicense'])
const activations = new Set(['activateLicense', 'activateLicenseByKey'])
const tokens = new Set(['createLicenseToken', 'createLicenseTokenByKey'])

/**
 * `GET /metrics` and the hooks that feed it (Prometheus text format): request counts and durations,
 * business counters, and the default process and Node.js metrics. One registry per app, never the
 * global one, so several apps in one process (tests) keep separate counts. Labels use the route
 * pattern (`/api/v0/licenses/:id`), not the URL, so the number of series stays bounded.
 */
export function registerMetrics(app: App, extra?: (registry: Registry) => void): void {
  const registry = new Registry()
  extra?.(registry)
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
  const validated = new Counter({
    name: 'keyturn_license_validations_total',
    help: 'License validations answered, by result: valid, the reason a license is not valid (revoked, expired, suspended, …), or not_found.',
    labelNames: ['result'] as const,
    registers: [registry],
  })
  const activated = new Counter({
    name: 'keyturn_activations_total',
    help: 'Activation requests, by outcome: created (a seat taken), existing (an activated machine again) or refused.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  const issued = new Counter({
    name: 'keyturn_license_tokens_issued_total',
    help: 'License tokens issued.',
    registers: [registry],
  })
  const replays = new Counter({
    name: 'keyturn_idempotent_replays_total',
    help: 'Responses replayed for a repeated Idempotency-Key, by route pattern (nothing ran again).',
    labelNames: ['route'] as const,
    registers: [registry],
  })

  app.addHook('onSend', async (request, reply, payload) => {
    const operation = request.routeOptions.schema?.operationId
    if (operation === undefined) {
      return payload
    }
    const status = reply.statusCode
    if (reply.getHeader('idempotent-replayed') === 'true') {
      replays.inc({ route: request.routeOptions.url ?? 'unmatched' })
    } else if (validations.has(operation)) {
      const result = status === 200 ? validationResult(payload) : status === 404 ? 'not_found' : undefined
      if (result !== undefined) {
        validated.inc({ result })
      }
    } else if (activations.has(operation)) {
      const outcome =
        status === 201 ? 'created' : status === 200 ? 'existing' : status === 409 ? 'refused' : undefined
      if (outcome !== undefined) {
        activated.inc({ outcome })
      }
    } else if (tokens.has(operation) && status >= 200 && status < 300) {
      issued.inc()
    }
    return payload
  })

  app.addHook('onResponse', async (request, reply) => {
    // Unknown routes share one label: URLs sent by scanners must not create series.
    const route = request.routeOptions.url ?? 'unmatched'
    requests.inc({ method: request.method, route, status: String(reply.statusCode) })
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000)
  })

  // The default metrics start with the first scrape: their event-loop and GC observers cost a
  // little in every process, and apps that are never scraped (tests build hundreds) skip them.
  let collectingDefaults = false
  // Scrapes come every few seconds: log them only when something is wrong.
  app.get('/metrics', { logLevel: 'warn', schema: { hide: true } }, async (_request, reply) => {
    if (!collectingDefaults) {
      collectingDefaults = true
      collectDefaultMetrics({ register: registry })
    }
    return reply.type(registry.contentType).send(await registry.metrics())
  })
}

/** `valid`, or the reason a validation answered not valid, from the response body. */
function validationResult(payload: unknown): string | undefined {
  if (typeof payload !== 'string') {
    return undefined
  }
  try {
    const body = JSON.parse(payload) as { isValid?: unknown; reason?: unknown }
    if (body.isValid === true) {
      return 'valid'
    }
    return typeof body.reason === 'string' ? body.reason : 'invalid'
  } catch {
    return undefined
  }
}
