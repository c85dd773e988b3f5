/**
 * @module Rate limits and the key-guessing guard, counted in @fastify/rate-limit-style stores
 * (counters.ts). Budgets, per minute:
 * - a management key (admin or product): `keyPerMinute` for the management API and another
 *   `keyPerMinute` for the application-facing routes, whatever address it calls from;
 * - a client key (embedded in applications, shared by every installation) and every
 *   unauthenticated request: `ipPerMinute` per client IP (an IPv6 /64 counts as one address).
 * - a payment provider's webhook receiver (`/integrations/:id/webhook`): `receiverPerMinute` per
 *   integration, whatever address the provider sends from, so a burst of provider events neither
 *   spends nor is refused by the budget of the addresses it shares.
 * `/healthz`, `/readyz` and `/metrics` are exempt.
 */
import { normalizeIP } from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../../http/app-types.js'
import { problemFor, sendProblem } from '../../http/error-handler.js'
import type { CounterStore } from '../counters.js'
import type { RefusalLog, RefusedBudget, RefusedClientKind } from '../refusal-log.js'

export interface ProtectionOptions {
  /** Requests per management API key per minute, per budget (management, application-facing); 0: off. */
  readonly keyPerMinute: number
  /** Requests per client IP per minute (client keys, unauthenticated requests); 0: off. */
  readonly ipPerMinute: number
  /** `license_not_found` answers to one IP within `guessWindowSeconds` before it is blocked; 0: off. */
  readonly guessLimit: number
  readonly guessBlockSeconds: number
  /** Deliveries per payment-provider integration per minute; default `defaultReceiverPerMinute`; 0: off. */
  readonly receiverPerMinute?: number
  readonly counters: CounterStore
}

/** A provider's renewal run or redelivery backlog arrives in bursts: ten a second, per integration. */
export const defaultReceiverPerMinute = 600

/** The guard counts `license_not_found` answers over this window. */
export const guessWindowSeconds = 600
const minuteMs = 60_000
const exemptRoutes = new Set(['/healthz', '/readyz', '/metrics'])

/** What one count says: as @fastify/rate-limit's limiter reported it. */
interface Counted {
  readonly remaining: number
  readonly ttlInSeconds: number
  readonly isExceeded: boolean
}

/**
 * The counting shared by the rate limits and the guard; one per app.
 *
 * Fast path: counts go straight to the store (counters.ts: in memory, in Redis or in the cluster
 * primary), in callbacks. @fastify/rate-limit's own
 * limiter (`createRateLimit`) awaited four promises per count (key, max, window, store) inside an
 * async hook; the memory store answers synchronously, so a count in one process now allocates no
 * promise. The hooks below are callback-style for the same reason. Measured with the rest of the
 * per-request hooks by bench/inject-cost.mjs (docs/decisions/0018-abuse-protection.md).
 */
export class Limits {
  readonly options: ProtectionOptions
  /** Where a refusal is recorded for the overview (refusal-log.ts); only refusals write to it. */
  readonly #refusals: RefusalLog | undefined

  constructor(options: ProtectionOptions, refusals?: RefusalLog) {
    this.options = options
    this.#refusals = refusals
  }

  /** The client's address as counted: X-Forwarded-For only with KEYTURN_TRUST_PROXY. */
  static addressOf(request: FastifyRequest): string {
    return normalizeIP(request.ip)
  }

  /**
   * Counts (or with `op` 'read' only reads) `key` in a window of `windowMs` allowing `max`. If the
   * store fails the request passes uncounted (counting must never take the API down).
   */
  #count(
    op: 'incr' | 'read',
    key: string,
    max: number,
    windowMs: number,
    then: (counted: Counted) => void,
  ): void {
    this.options.counters[op](
      key,
      (error, result) => {
        const current = error === null && result !== undefined ? result.current : 0
        const ttl = error === null && result !== undefined ? result.ttl : 0
        then({
          remaining: Math.max(0, max - current),
          ttlInSeconds: Math.ceil(ttl / 1000),
          isExceeded: current > max,
        })
      },
      windowMs,
      max,
    )
  }

  /**
   * Counts one request in a bucket and sets the RateLimit headers, then calls `then(true)`; when
   * the bucket is exhausted it answers 429 instead and calls `then(false)`.
   */
  take(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string,
    max: number,
    then: (allowed: boolean) => void,
    refusedBudget?: RefusedBudget,
    refusedClient?: string,
  ): void {
    this.#count('incr', key, max, minuteMs, (result) => {
      reply.header('RateLimit-Limit', max)
      reply.header('RateLimit-Remaining', result.remaining)
      reply.header('RateLimit-Reset', result.ttlInSeconds)
      if (!result.isExceeded) {
        then(true)
        return
      }
      reply.header('Retry-After', result.ttlInSeconds)
      if (refusedBudget !== undefined && refusedClient !== undefined) {
        this.#recordRefusal(request, refusedBudget, refusedClient)
      }
      const refused = () => then(false)
      // Once the 429 is sent, so that an async hook returning then sees the reply sent.
      sendProblem(
        reply,
        problemFor(
          'rate_limited',
          `Too many requests: at most ${max} a minute. Retry after ${result.ttlInSeconds} seconds.`,
          request.id,
        ),
      ).then(refused, refused)
    })
  }

  /** Notes a refused client for the overview (only on the refusing path: allowed requests pay nothing). */
  #recordRefusal(request: FastifyRequest, budget: RefusedBudget, client: string): void {
    const principal = request.principal as FastifyRequest['principal'] | undefined
    const kind: RefusedClientKind =
      budget === 'address'
        ? 'address'
        : budget === 'receiver'
          ? 'integration'
          : principal?.operator === undefined
            ? 'apiKey'
            : 'operator'
    const productId = principal !== undefined && principal.role !== 'admin' ? principal.productId : null
    this.#refusals?.refused(budget, kind, client, productId)
  }

  /** The per-IP budget; `then(false)` when it answered 429. */
  takeAddress(request: FastifyRequest, reply: FastifyReply, then: (allowed: boolean) => void): void {
    const { ipPerMinute } = this.options
    if (ipPerMinute === 0) {
      then(true)
      return
    }
    const address = Limits.addressOf(request)
    this.take(request, reply, `ip:${address}`, ipPerMinute, then, 'address', address)
  }

  /** The key-guessing guard: `then(seconds)` the client's address stays blocked, 0 when it is not. */
  blockedFor(request: FastifyRequest, then: (seconds: number) => void): void {
    const { guessLimit, guessBlockSeconds } = this.options
    if (guessLimit === 0) {
      then(0)
      return
    }
    this.#count('read', `block:${Limits.addressOf(request)}`, 0, guessBlockSeconds * 1000, (result) =>
      then(result.isExceeded ? Math.max(1, result.ttlInSeconds) : 0),
    )
  }

  /** Counts a `license_not_found` answer; the `guessLimit`-th within the window blocks the address. */
  countGuess(request: FastifyRequest, then: () => void): void {
    const { guessLimit, guessBlockSeconds } = this.options
    if (guessLimit === 0) {
      then()
      return
    }
    const address = Limits.addressOf(request)
    this.#count('incr', `guess:${address}`, guessLimit - 1, guessWindowSeconds * 1000, (guesses) => {
      if (!guesses.isExceeded) {
        then()
        return
      }
      this.#count('incr', `block:${address}`, 0, guessBlockSeconds * 1000, () => {
        request.log.warn(
          { address, blockSeconds: guessBlockSeconds },
          'key-guessing guard: address blocked from the by-key routes',
        )
        then()
      })
    })
  }
}

/**
 * Counts every request outside the API (documentation, unknown routes) in its address's budget;
 * API routes are counted after authentication (`limitApiRequest`), probes not at all.
 */
export function limitOutsideApi(app: App, limits: Limits): void {
  app.addHook('onRequest', (request, reply, done) => {
    const { config, url } = request.routeOptions
    if (
      config?.keyturnApi === true ||
      config?.providerReceiver === true ||
      (url !== undefined && exemptRoutes.has(url))
    ) {
      done()
      return
    }
    // A 429 is sent by takeAddress; the hook chain then stops here.
    limits.takeAddress(request, reply, (allowed) => allowed && done())
  })
}

/**
 * The onRequest hook of a provider webhook receiver (route config `providerReceiver`): the
 * integration in the path picks the budget.
 */
export function limitReceiverRequest(limits: Limits) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const max = limits.options.receiverPerMinute ?? defaultReceiverPerMinute
    if (max === 0) {
      done()
      return
    }
    const { id } = request.params as { id?: unknown }
    const integration = typeof id === 'string' ? id.slice(0, 64) : ''
    limits.take(
      request,
      reply,
      `receiver:${integration}`,
      max,
      (allowed) => allowed && done(),
      'receiver',
      integration,
    )
  }
}

/** The onRequest hook of every API route, after authentication: the principal picks the budget. */
export function limitApiRequest(limits: Limits) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    // A 429 is sent by take; the hook chain then stops here.
    const next = (allowed: boolean) => allowed && done()
    const principal = request.principal
    if (principal.role === 'client') {
      limits.takeAddress(request, reply, next)
      return
    }
    const { keyPerMinute } = limits.options
    if (keyPerMinute === 0) {
      done()
      return
    }
    const budget = request.routeOptions.config.applicationFacing === true ? 'app' : 'mgmt'
    const client = principal.operator?.id ?? principal.apiKeyId ?? ''
    const refusedAs = budget === 'app' ? 'application' : 'management'
    limits.take(request, reply, `key:${budget}:${client}`, keyPerMinute, next, refusedAs, client)
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
    /** A payment provider's webhook receiver: its own budget per integration (limitReceiverRequest). */
    providerReceiver?: boolean
  }
}
