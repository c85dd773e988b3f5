import type { Clock } from '../core/clock.js'

export interface SignInLimitSettings {
  /** Failed sign-ins of one account within `windowMs` that lock it. */
  readonly accountFailures: number
  /** Failed sign-ins from one IP address within `windowMs` that lock it out. */
  readonly ipFailures: number
  readonly windowMs: number
  /** How long a lockout lasts; it ends by itself. */
  readonly lockoutMs: number
  /** At most this many accounts and addresses are tracked each (the oldest are forgotten first). */
  readonly maxTracked: number
}

export const signInLimitDefaults: SignInLimitSettings = {
  accountFailures: 5,
  ipFailures: 50,
  windowMs: 15 * 60_000,
  lockoutMs: 15 * 60_000,
  maxTracked: 10_000,
}

interface Counter {
  windowStart: number
  failures: number
  lockedUntil: number
}

export type SignInGate =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterMs: number }

/**
 * Counts failed sign-ins per account and per IP address, in this process. `check` comes before any
 * password hashing, so a locked account or address costs no hashing work; the lockout ends by itself
 * after `lockoutMs` (never a permanent lock an attacker could impose on an operator).
 */
export class SignInLimits {
  readonly #settings: SignInLimitSettings
  readonly #clock: Clock
  readonly #accounts = new Map<string, Counter>()
  readonly #ips = new Map<string, Counter>()

  constructor(clock: Clock, settings: Partial<SignInLimitSettings> = {}) {
    this.#clock = clock
    this.#settings = { ...signInLimitDefaults, ...settings }
  }

  check(account: string, ip: string): SignInGate {
    const now = this.#clock.now().getTime()
    const until = Math.max(
      this.#lockedUntil(this.#accounts, account.toLowerCase(), now),
      this.#lockedUntil(this.#ips, ip, now),
    )
    return until > now ? { allowed: false, retryAfterMs: until - now } : { allowed: true }
  }

  recordFailure(account: string, ip: string): void {
    const now = this.#clock.now().getTime()
    this.#count(this.#accounts, account.toLowerCase(), this.#settings.accountFailures, now)
    this.#count(this.#ips, ip, this.#settings.ipFailures, now)
  }

  /** A successful sign-in clears the account's failures (the address keeps its count). */
  recordSuccess(account: string): void {
    this.#accounts.delete(account.toLowerCase())
  }

  #lockedUntil(counters: Map<string, Counter>, key: string, now: number): number {
    const counter = counters.get(key)
    return counter !== undefined && counter.lockedUntil > now ? counter.lockedUntil : 0
  }

  #count(counters: Map<string, Counter>, key: string, limit: number, now: number): void {
    let counter = counters.get(key)
    if (counter === undefined || now - counter.windowStart >= this.#settings.windowMs) {
      counter = { windowStart: now, failures: 0, lockedUntil: counter?.lockedUntil ?? 0 }
    }
    counter.failures += 1
    if (counter.failures >= limit) {
      counter.lockedUntil = now + this.#settings.lockoutMs
      counter.failures = 0
      counter.windowStart = now
    }
    counters.delete(key)
    counters.set(key, counter)
    if (counters.size > this.#settings.maxTracked) {
      const oldest = counters.keys().next().value
      if (oldest !== undefined) {
        counters.delete(oldest)
      }
    }
  }
}
