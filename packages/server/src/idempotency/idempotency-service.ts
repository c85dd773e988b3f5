import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { apiKeyGone, type Principal } from '../core/principal.js'
import { decryptText, encryptText } from '../core/secrets.js'
import {
  idempotencyLeaseMs,
  idempotencyRetentionMs,
  type RequestDescription,
  requestHash,
  type StoredResponse,
} from './idempotency.js'
import type { IdempotencyStore, NewClaim } from './idempotency-store.js'

/** What idempotency needs of the audit log: the events a request committed (EventStore fits). */
export interface RequestEvents {
  findByRequestId(requestId: string): Promise<{ readonly data: Record<string, unknown> }[]>
}

export type IdempotencyStart =
  /** The request holds the key: run it, then `finish` (or `release` after a server error). */
  | { readonly kind: 'run'; readonly claim: NewClaim }
  /** The same request already finished: answer with its response. */
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  /**
   * The first request committed its change (its events carry its request id) but its process
   * stopped before the response was stored: answer from `events` (the resource as it returned it),
   * then `finish` with `claim` (the first request's), or `rerun` when nothing can be rebuilt safely.
   */
  | {
      readonly kind: 'recover'
      readonly claim: NewClaim
      readonly events: readonly { readonly data: Record<string, unknown> }[]
    }

/** How often a process deletes expired records (they are ignored anyway; this only bounds the table). */
const purgeIntervalMs = 10 * 60 * 1000
/** Marks a stored body kept encrypted (the rest is encryptText's base64url); a JSON body never starts so. */
const encryptedBodyPrefix = 'keyturn-encrypted:v1:'

/** What an encrypted body is bound to: the API key, the key and the request, so it cannot be moved. */
function bodyContext(claim: { apiKeyId: string; key: string; requestHash: string }): string {
  return `idempotency\n${claim.apiKeyId}\n${claim.key}\n${claim.requestHash}`
}

export class IdempotencyService {
  readonly #store: IdempotencyStore
  readonly #events: RequestEvents
  readonly #clock: Clock
  readonly #responseEncryption: Buffer
  /** When this process last purged: housekeeping only, so process memory is enough. */
  #lastPurge: Date | undefined

  constructor(deps: {
    readonly store: IdempotencyStore
    readonly events: RequestEvents
    readonly clock: Clock
    /** Encrypts the bodies of responses that hold a secret (SecretKeys.idempotencyResponseEncryption). */
    readonly responseEncryption: Buffer
  }) {
    this.#store = deps.store
    this.#events = deps.events
    this.#clock = deps.clock
    this.#responseEncryption = deps.responseEncryption
  }

  /**
   * Claims `key` for the request, or says to replay the response it already gave. Throws
   * `idempotency_key_reused` when the key belongs to a different request, and
   * `idempotency_key_in_progress` while the same request is still running.
   */
  async start(
    principal: Principal,
    key: string,
    request: RequestDescription,
    requestId: string,
  ): Promise<IdempotencyStart> {
    if (principal.apiKeyId === undefined) {
      throw new DomainError(
        'bad_request',
        'Idempotency-Key is kept per API key: a signed-in operator’s request cannot carry one. Send the request without it.',
      )
    }
    const now = this.#clock.now()
    await this.#purgeNowAndThen(now)
    const claim: NewClaim = {
      apiKeyId: principal.apiKeyId,
      key,
      requestHash: requestHash(request),
      requestId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + idempotencyLeaseMs),
    }
    const outcome = await this.#store.claim(claim, now)
    if (outcome.kind === 'claimed') {
      return { kind: 'run', claim }
    }
    if (outcome.kind === 'api_key_gone') {
      throw apiKeyGone()
    }
    const { record } = outcome
    if (record.requestHash !== claim.requestHash) {
      throw new DomainError(
        'idempotency_key_reused',
        'This Idempotency-Key was used with a different request (method, path or body); use a new key for a new request.',
      )
    }
    if (record.response === null && record.expiresAt <= now) {
      // The claim outlived its lease and the store would not take it over: its request committed.
      const events = await this.#events.findByRequestId(record.requestId)
      return { kind: 'recover', claim: { ...claim, requestId: record.requestId }, events }
    }
    if (record.response === null) {
      throw new DomainError(
        'idempotency_key_in_progress',
        'A request with this Idempotency-Key is still running; retry after it finishes.',
      )
    }
    return { kind: 'replay', response: this.#readable(record.response, claim) }
  }

  /**
   * Stores the response for replays. `holdsSecret`: the body holds a secret or token shown once, so
   * it is stored encrypted (never in clear), bound to this API key, key and request.
   */
  async finish(claim: NewClaim, response: StoredResponse, holdsSecret = false): Promise<void> {
    const now = this.#clock.now()
    const stored =
      holdsSecret && response.body !== null
        ? {
            ...response,
            body: `${encryptedBodyPrefix}${encryptText(this.#responseEncryption, response.body, bodyContext(claim))}`,
          }
        : response
    await this.#store.complete(claim, stored, new Date(now.getTime() + idempotencyRetentionMs))
  }

  /** The stored response as it was sent: an encrypted body decrypted. */
  #readable(response: StoredResponse, claim: NewClaim): StoredResponse {
    if (response.body === null || !response.body.startsWith(encryptedBodyPrefix)) {
      return response
    }
    try {
      const encrypted = response.body.slice(encryptedBodyPrefix.length)
      return { ...response, body: decryptText(this.#responseEncryption, encrypted, bodyContext(claim)) }
    } catch {
      // The master secret changed since (or the row was tampered with): the secret cannot be shown.
      throw new DomainError(
        'idempotency_key_unrecoverable',
        'The request with this Idempotency-Key completed, but its response holds a secret that can no longer be read (the server’s master secret changed); nothing new was created.',
      )
    }
  }

  /**
   * Takes a recovered claim over for this request (`requestId`), to run it again: for operations
   * whose answer cannot be rebuilt and may safely be given anew (a token). False if another retry
   * took it first.
   */
  async rerun(recovered: NewClaim, requestId: string): Promise<NewClaim | undefined> {
    const now = this.#clock.now()
    const claim = {
      ...recovered,
      requestId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + idempotencyLeaseMs),
    }
    return (await this.#store.takeOver(recovered.requestId, claim)) ? claim : undefined
  }

  /** Gives the key up without a response, so a retry runs again. */
  async release(claim: NewClaim): Promise<void> {
    await this.#store.release(claim)
  }

  async #purgeNowAndThen(now: Date): Promise<void> {
    if (this.#lastPurge !== undefined && now.getTime() - this.#lastPurge.getTime() < purgeIntervalMs) {
      return
    }
    this.#lastPurge = now
    await this.#store.deleteExpired(now, new Date(now.getTime() - idempotencyRetentionMs))
  }
}
