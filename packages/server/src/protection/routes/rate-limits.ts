/**
 * @module Rate limits and the key-guessing guard, on @fastify/rate-limit's counting (`createRateLimit`)
 * and stores (counters.ts). Budgets, per minute:
 * - a management key (admin or product): `keyPerMinute` for the management API and another
 *   `keyPerMinute` for the application-facing routes, whatever address it calls from;
 * - a client key (embedded in applications, shared by every installation) and every
 *   unauthenticated request: `ipPerMinute` per client IP (an IPv6 /64 counts as one address).
 * `/healthz`, `/readyz` and `/metrics` are exempt.
 */
import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../../http/app-types.js'
import { problemFor, sendProblem } from '../../http/error-handler.js'
import type { CounterStore } from '../counters.js'

export interface ProtectionOptions {
  /** Requests per management API key per minute, per budget (management, application-facing); 0: off. */
  readonly keyPerMinute: number
  /** Requests per client IP per minute (client keys, unauthenticated requests); 0: off. */
  readonly ipPerMinute: number
  /** `license_not_found` answers to one IP within `guessWindowSeconds` before it is blocked; 0: off. */
  readonly guessLimit: number
  readonly guessBlockSeconds: number
  readonly counters: CounterStore
}

/** The guard counts `license_not_found` answers over this window. */
export const guessWindowSeconds = 600
const minuteMs = 60_000
const exemptRoutes = new Set(['/healthz', '/readyz', '/metrics'])

interface Bucket {
  readonly key: string
  readonly max: number
}
const bucketOf = Symbol('keyturn.rateLimitBucket')
type WithBucket = FastifyRequest & { [bucketOf]?: Bucket }

type Limiter = ReturnType<App['createRateLimit']>

/** The counting shared by the rate limits and the guard; one per app. */
export class Limits {
  readonly options: ProtectionOptions
  readonly #app: App
  #requests: Limiter | undefined
  #guesses: Limiter | undefined
  #blocks: Limiter | undefined

  constructor(app: App, options: ProtectionOptions) {
    this.#app = app
    this.options = options
    const store = options.counters
    app.register(rateLimit, {
      global: false,
      // A constructor that returns the shared store: every limiter below counts in it, keys prefixed.
      store: function Store() {
        return store
      } as unknown as new () => CounterStore,
      // Counting must never take the API down: if Redis fails, requests pass uncounted.
      skipOnError: true,
      keyGenerator: (request) => (request as WithBucket)[bucketOf]?.key ?? 'none',
      max: (request) => (request as WithBucket)[bucketOf]?.max ?? 0,
      timeWindow: minuteMs,
    })
  }

  /** The client's address as counted: X-Forwarded-For only with KEYTURN_TRUST_PROXY. */
  static addressOf(request: FastifyRequest): string {
    return normalizeIP(request.ip)
  }

  /**
   * Counts one request in a bucket and sets the RateLimit headers; answers 429 and returns false
   * when the bucket is exhausted.
   */
  async take(request: FastifyRequest, reply: FastifyReply, key: string, max: number): Promise<boolean> {
    this.#requests ??= this.#app.createRateLimit()
    ;(request as WithBucket)[bucketOf] = { key, max }
    const result = await this.#requests(request)
    if (result.isAllowed) {
      return true
    }
    reply.header('RateLimit-Limit', max)
    reply.header('RateLimit-Remaining', result.remaining)
    reply.header('RateLimit-Reset', result.ttlInSeconds)
    if (!result.isExceeded) {
      return true
    }
    reply.header('Retry-After', result.ttlInSeconds)
    await sendProblem(
      reply,
      problemFor(
        'rate_limited',
        `Too many requests: at most ${max} a minute. Retry after ${result.ttlInSeconds} seconds.`,
        request.id,
      ),
    )
    return false
  }

  /** The per-IP budget; false when it answered 429. */
  takeAddress(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const { ipPerMinute } = this.options
    return ipPerMinute === 0
      ? Promise.resolve(true)
      : this.take(request, reply, `ip:${Limits.addressOf(request)}`, ipPerMinute)
  }

  /** The key-guessing guard: seconds the client's address stays blocked, 0 when it is not. */
  async blockedFor(request: FastifyRequest): Promise<number> {
    if (this.options.guessLimit === 0) {
      return 0
    }
    const result = await this.#blockLimiter()(request, { increment: false })
    return !result.isAllowed && result.isExceeded ? Math.max(1, result.ttlInSeconds) : 0
  }

  /** Counts a `license_not_found` answer; the `guessLimit`-th within the window blocks the address. */
  async countGuess(request: FastifyRequest): Promise<void> {
    const { guessLimit, guessBlockSeconds } = this.options
    if (guessLimit === 0) {
      return
    }
    this.#guesses ??= this.#app.createRateLimit({
      keyGenerator: (req) => `guess:${Limits.addressOf(req)}`,
      max: guessLimit - 1,
      timeWindow: guessWindowSeconds * 1000,
    })
    const result = await this.#guesses(request)
    if (!result.isAllowed && result.isExceeded) {
      await this.#blockLimiter()(request)
      request.log.warn(
        { address: Limits.addressOf(request), blockSeconds: guessBlockSeconds },
        'key-guessing guard: address blocked from the by-key routes',
      )
    }
  }

  #blockLimiter(): Limiter {
    this.#blocks ??= this.#app.createRateLimit({
      keyGenerator: (req) => `block:${Limits.addressOf(req)}`,
      max: 0,
      timeWindow: this.options.guessBlockSeconds * 1000,
    })
    return this.#blocks
  }
}

/**
 * Counts every request outside the API (documentation, unknown routes) in its address's budget;
 * API routes are counted after authentication (`limitApiRequest`), probes not at all.
 */
export function limitOutsideApi(app: App, limits: Limits): void {
  app.addHook('onRequest', async (request, reply) => {
    const { config, url } = request.routeOptions
    if (config?.keyturnApi === true || (url !== undefined && exemptRoutes.has(url))) {
      return
    }
    await limits.takeAddress(request, reply)
  })
}

/** The onRequest hook of every API route, after authentication: the principal picks the budget. */
export function limitApiRequest(limits: Limits) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const principal = request.principal
    if (principal.role === 'client') {
      await limits.takeAddress(request, reply)
      return
    }
    const { keyPerMinute } = limits.options
    if (keyPerMinute > 0) {
      const budget = request.routeOptions.config.applicationFacing === true ? 'app' : 'mgmt'
      await limits.take(request, reply, `key:${budget}:${principal.apiKeyId}`, keyPerMinute)
    }
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on every route of the API scopes (protection/): counted after authentication. */
    keyturnApi?: boolean
    /**
     * An application-facing by-key route (validate, activate, tokens by key, …): its own rate-limit
     * budget for management keys, the key-guessing guard, the echoed `nonce` and signed answers.
     * One line in a route's options: `config: { applicationFacing: true }`.
     */
    applicationFacing?: boolean
  }
}
