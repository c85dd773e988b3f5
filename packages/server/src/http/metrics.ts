import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
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

  // Fast path: the business counters' hooks go only on the routes they watch, and a
  // validation's result is read from the answer before it is serialised instead of parsing the
  // JSON that was sent (every validation parsed its own answer again: ~1–2 µs, and one more async
  // hook on every route). Callback-style hooks: no promise per request.
  app.addHook('onRoute', (route) => {
    const operation = route.schema?.operationId
    if (operation === undefined) {
      return
    }
    const isPost = [route.method].flat().includes('POST') // only a POST can be an idempotent replay
    let count: ((status: number, request: FastifyRequest) => void) | undefined
    if (validations.has(operation)) {
      addRouteHook(route, 'preSerialization', rememberValidationResult)
      count = (status, request) => {
        const result = status === 200 ? request[validationResultOf] : status === 404 ? 'not_found' : undefined
        if (result !== undefined) {
          validated.inc({ result })
        }
      }
    } else if (activations.has(operation)) {
      count = (status) => {
        const outcome =
          status === 201 ? 'created' : status === 200 ? 'existing' : status === 409 ? 'refused' : undefined
        if (outcome !== undefined) {
          activated.inc({ outcome })
        }
      }
    } else if (tokens.has(operation)) {
      count = (status) => {
        if (status >= 200 && status < 300) {
          issued.inc()
        }
      }
    }
    if (count === undefined && !isPost) {
      return
    }
    addRouteHook(
      route,
      'onSend',
      (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: OnSendDone) => {
        if (isPost && reply.getHeader('idempotent-replayed') === 'true') {
          replays.inc({ route: request.routeOptions.url ?? 'unmatched' })
        } else {
          count?.(reply.statusCode, request)
        }
        done(null, payload)
      },
    )
  })

  app.addHook('onResponse', (request, reply, done) => {
    // Unknown routes share one label: URLs sent by scanners must not create series.
    const route = request.routeOptions.url ?? 'unmatched'
    requests.inc({ method: request.method, route, status: String(reply.statusCode) })
    duration.observe({ method: request.method, route }, reply.elapsedTime / 1000)
    done()
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

type OnSendDone = (error: Error | null, payload?: unknown) => void
type Hook = (...args: never[]) => unknown

const validationResultOf = Symbol('keyturn.validationResult')
declare module 'fastify' {
  interface FastifyRequest {
    /** `valid` or the reason a validation answered not valid (metrics only). */
    [validationResultOf]?: string
  }
}

/** Keeps `valid`, or the reason a validation answered not valid, from the answer about to be sent. */
function rememberValidationResult(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: OnSendDone,
): void {
  if (reply.statusCode === 200 && typeof payload === 'object' && payload !== null) {
    const body = payload as { isValid?: unknown; reason?: unknown }
    request[validationResultOf] =
      body.isValid === true ? 'valid' : typeof body.reason === 'string' ? body.reason : 'invalid'
  }
  done(null, payload)
}

/** Appends a hook to one route's own hooks of that name. */
function addRouteHook(route: RouteOptions, name: 'preSerialization' | 'onSend', hook: Hook): void {
  const existing = route[name] as Hook | Hook[] | undefined
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
  ;(route as unknown as Record<string, Hook[]>)[name] = [...list, hook]
}
