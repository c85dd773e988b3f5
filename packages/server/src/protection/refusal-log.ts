import type { ProductId, RateLimitedClient } from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'

/** Clients remembered at once; beyond this the one refused longest ago is forgotten. */
export const refusalLogCapacity = 200

export type RefusedBudget = RateLimitedClient['budget']
export type RefusedClientKind = RateLimitedClient['clientKind']

interface Entry {
  readonly budget: RefusedBudget
  readonly clientKind: RefusedClientKind
  readonly client: string
  readonly productId: ProductId | null
  refused: number
  readonly firstRefusedAt: Date
  lastRefusedAt: Date
}

/**
 * The clients this process's rate limits refused (a 429), for the overview's latest failures
 * (`GET /stats/failures`). Written only where a limit refuses, so a request within its budget pays
 * nothing; kept in memory, bounded to `refusalLogCapacity` clients, per process: it starts empty
 * when the process starts, and with several workers each answers with its own refusals.
 */
export class RefusalLog {
  readonly #clock: Clock
  /** By budget and client, in order of the last refusal (a Map keeps insertion order). */
  readonly #entries = new Map<string, Entry>()
  readonly since: Date

  constructor(clock: Clock) {
    this.#clock = clock
    this.since = clock.now()
  }

  refused(
    budget: RefusedBudget,
    clientKind: RefusedClientKind,
    client: string,
    productId: ProductId | null,
  ): void {
    const now = this.#clock.now()
    const id = `${budget}|${clientKind}|${client}|${productId ?? ''}`
    const entry = this.#entries.get(id)
    this.#entries.delete(id)
    this.#entries.set(
      id,
      entry === undefined
        ? {
            budget,
            clientKind,
            client: client.slice(0, 128),
            productId,
            refused: 1,
            firstRefusedAt: now,
            lastRefusedAt: now,
          }
        : { ...entry, refused: entry.refused + 1, lastRefusedAt: now },
    )
    if (this.#entries.size > refusalLogCapacity) {
      const oldest = this.#entries.keys().next().value
      if (oldest !== undefined) {
        this.#entries.delete(oldest)
      }
    }
  }

  /** Up to `limit` clients, the last refused first; only `productId`'s when given. */
  latest(limit: number, productId: ProductId | undefined): RateLimitedClient[] {
    const found: RateLimitedClient[] = []
    for (const entry of [...this.#entries.values()].reverse()) {
      if (found.length === limit) {
        break
      }
      if (productId === undefined || entry.productId === productId) {
        found.push({
          budget: entry.budget,
          clientKind: entry.clientKind,
          client: entry.client,
          productId: entry.productId,
          refused: entry.refused,
          firstRefusedAt: entry.firstRefusedAt.toISOString(),
          lastRefusedAt: entry.lastRefusedAt.toISOString(),
        })
      }
    }
    return found
  }
}
