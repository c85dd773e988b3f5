/**
 * @module Floating seats from the application's side: `startHeartbeats` takes a seat and keeps it
 * with heartbeats until `stop()`. Web-standard only (timers injectable), so it runs in Node,
 * browsers, Deno and Bun.
 */
import type { ActivationResource } from '../../protocol/src/index.js'
import { KeyturnApiError } from './errors.js'

/** The timer functions the heartbeat loop uses; tests inject their own. */
export interface HeartbeatTimers {
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

export interface StartHeartbeatsOptions {
  readonly key: string
  readonly productId: string
  readonly fingerprint: string
  /** Time between heartbeats; default half the license's `heartbeatTtl` (15 minutes when it has none). */
  readonly intervalMs?: number
  /** Every successful heartbeat, with the renewed activation. */
  readonly onHeartbeat?: (activation: ActivationResource) => void
  /**
   * The machine no longer holds its seat: the lease lapsed (no heartbeat reached the server in
   * time), the license was revoked or expired, or the machine was deactivated. Stop using what the
   * seat unlocks; the loop keeps trying to take the seat again and calls `onSeatRegained` when it does.
   */
  readonly onSeatLost?: (error: KeyturnApiError) => void
  readonly onSeatRegained?: (activation: ActivationResource) => void
  /** A heartbeat or activation that failed for another reason (network, 5xx, all seats taken); retried with backoff. */
  readonly onError?: (error: unknown) => void
  readonly timers?: HeartbeatTimers
}

/** A running heartbeat loop. */
export interface Heartbeats {
  /** The activation as the server last answered it. */
  readonly activation: ActivationResource
  /** False between `onSeatLost` and `onSeatRegained`, and after `stop()`. */
  readonly holdsSeat: boolean
  /** Stops the heartbeats and deactivates the machine, freeing its seat at once (idempotent). */
  stop(): Promise<void>
}

/** What the loop needs of `KeyturnClient`. */
export interface HeartbeatApi {
  activateLicenseByKey(body: {
    key: string
    productId: string
    fingerprint: string
  }): Promise<ActivationResource>
  heartbeatLicenseByKey(body: {
    key: string
    productId: string
    fingerprint: string
  }): Promise<ActivationResource>
  deactivateLicenseByKey(body: { key: string; productId: string; fingerprint: string }): Promise<void>
}

/** Heartbeat interval of a license without a `heartbeatTtl` (its activations never lapse). */
export const defaultHeartbeatIntervalMs = 15 * 60_000
/** First retry delay after a failure; doubled per failure up to `maxRetryDelayMs`. */
export const minRetryDelayMs = 1000
export const maxRetryDelayMs = 60_000

/** Answers that mean the seat is gone (not a passing failure). */
const seatLostCodes = new Set(['activation_not_found', 'license_not_active', 'license_not_found'])

const defaultTimers: HeartbeatTimers = {
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  // The handle is whatever this runtime's setTimeout returned (a number, or Node's Timeout).
  clearTimeout: (handle) => globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0]),
}

/** Takes the seat (rejects with `KeyturnApiError` if refused, e.g. `activation_limit_reached`), then keeps it. */
export async function startHeartbeatLoop(
  api: HeartbeatApi,
  options: StartHeartbeatsOptions,
): Promise<Heartbeats> {
  const machine = { key: options.key, productId: options.productId, fingerprint: options.fingerprint }
  const activation = await api.activateLicenseByKey(machine)
  const loop = new HeartbeatLoop(api, machine, options, activation)
  loop.schedule(loop.interval())
  return loop
}

class HeartbeatLoop implements Heartbeats {
  readonly #api: HeartbeatApi
  readonly #machine: { key: string; productId: string; fingerprint: string }
  readonly #options: StartHeartbeatsOptions
  readonly #timers: HeartbeatTimers
  #activation: ActivationResource
  #holdsSeat = true
  #isStopped = false
  #failures = 0
  #timer: unknown
  #running: Promise<void> | undefined
  #stopping: Promise<void> | undefined

  constructor(
    api: HeartbeatApi,
    machine: { key: string; productId: string; fingerprint: string },
    options: StartHeartbeatsOptions,
    activation: ActivationResource,
  ) {
    this.#api = api
    this.#machine = machine
    this.#options = options
    this.#timers = options.timers ?? defaultTimers
    this.#activation = activation
  }

  get activation(): ActivationResource {
    return this.#activation
  }

  get holdsSeat(): boolean {
    return this.#holdsSeat && !this.#isStopped
  }

  /** Half the lease the server granted (`expiresAt` − `lastHeartbeatAt`), unless `intervalMs` is given. */
  interval(): number {
    if (this.#options.intervalMs !== undefined) {
      return this.#options.intervalMs
    }
    const { expiresAt, lastHeartbeatAt } = this.#activation
    if (expiresAt === null) {
      return defaultHeartbeatIntervalMs
    }
    return Math.max(minRetryDelayMs, (Date.parse(expiresAt) - Date.parse(lastHeartbeatAt)) / 2)
  }

  schedule(ms: number): void {
    if (this.#isStopped) {
      return
    }
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined
      this.#running = this.#beat().finally(() => {
        this.#running = undefined
      })
    }, ms)
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stop()
    return this.#stopping
  }

  async #stop(): Promise<void> {
    this.#isStopped = true
    if (this.#timer !== undefined) {
      this.#timers.clearTimeout(this.#timer)
      this.#timer = undefined
    }
    await this.#running
    if (!this.#holdsSeat) {
      return
    }
    this.#holdsSeat = false
    try {
      await this.#api.deactivateLicenseByKey(this.#machine)
    } catch (error) {
      if (!(error instanceof KeyturnApiError && seatLostCodes.has(error.code))) {
        throw error // the seat is freed when its lease lapses; the caller may retry stop()
      }
    }
  }

  /** One heartbeat (or, after losing the seat, one attempt to take it again), then the next is scheduled. */
  async #beat(): Promise<void> {
    const hadSeat = this.#holdsSeat
    try {
      const activation = hadSeat
        ? await this.#api.heartbeatLicenseByKey(this.#machine)
        : await this.#api.activateLicenseByKey(this.#machine)
      this.#activation = activation
      this.#holdsSeat = true // taken again while stopping: stop() gives it back
      this.#failures = 0
      if (hadSeat) {
        this.#options.onHeartbeat?.(activation)
      } else if (!this.#isStopped) {
        this.#options.onSeatRegained?.(activation)
      }
      this.schedule(this.interval())
    } catch (error) {
      if (hadSeat && error instanceof KeyturnApiError && seatLostCodes.has(error.code)) {
        this.#holdsSeat = false
        this.#options.onSeatLost?.(error)
      } else {
        this.#options.onError?.(error)
      }
      this.#failures++
      this.schedule(this.#retryDelay())
    }
  }

  /** Exponential backoff with jitter (half fixed, half random), so many machines do not retry in step. */
  #retryDelay(): number {
    const ceiling = Math.min(maxRetryDelayMs, minRetryDelayMs * 2 ** (this.#failures - 1), this.interval())
    return ceiling / 2 + Math.random() * (ceiling / 2)
  }
}
