import type { ProductId, Stats, StatsCounts, StatsQuery } from '@keyturn/protocol'
import type { BackgroundJob } from '../core/background-loop.js'
import type { Clock } from '../core/clock.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { canSeeProduct, type Principal, requireManagementKey, scopedProductId } from '../core/principal.js'
import type { ProductLookup } from '../core/product-lookup.js'
import { countedActivities, type DailyCounters } from './daily-counters.js'
import type { StatsScope, StatsStore } from './stats-store.js'

const dayMs = 86_400_000
/** The longest range one request reads: a year, leap day included. */
export const maxStatsDays = 366
/** How far ahead `now.licensesExpiringSoon` looks. */
const expiringSoonMs = 30 * dayMs
/** How often each process adds its counts to the stored rows. */
export const statsFlushMs = 5_000

/**
 * Daily per-product figures (docs/decisions/0044-daily-stats.md): the services count into
 * `DailyCounters` in memory; `flush` adds what was counted to `daily_stats`, every
 * `statsFlushMs` and once more when the app closes; `get` reads the stored days plus the "now"
 * figures.
 */
export class StatsService {
  readonly #store: StatsStore
  readonly #counters: DailyCounters
  readonly #products: ProductLookup
  readonly #clock: Clock

  constructor(deps: {
    readonly store: StatsStore
    readonly counters: DailyCounters
    readonly products: ProductLookup
    readonly clock: Clock
  }) {
    this.#store = deps.store
    this.#counters = deps.counters
    this.#products = deps.products
    this.#clock = deps.clock
  }

  /** Writes this process's pending counts; on failure they stay pending for the next flush. */
  async flush(): Promise<void> {
    const rows = this.#counters.take()
    try {
      await this.#store.add(rows)
    } catch (error) {
      this.#counters.back(rows)
      throw error
    }
  }

  async get(principal: Principal, query: StatsQuery): Promise<Stats> {
    requireManagementKey(principal)
    const now = this.#clock.now()
    const to = query.to ?? dayOf(now.getTime())
    const toMs = dayStartMs(to, '#/to')
    const from = query.from ?? dayOf(toMs - 29 * dayMs)
    const fromMs = dayStartMs(from, '#/from')
    if (fromMs > toMs) {
      throw new InvalidInputError('#/from', `from (${from}) is after to (${to}).`)
    }
    const length = (toMs - fromMs) / dayMs + 1
    if (length > maxStatsDays) {
      throw new InvalidInputError(
        '#/from',
        `The range from ${from} to ${to} spans ${length} days; at most ${maxStatsDays} may be asked at once.`,
      )
    }
    const productId = query.productId ?? scopedProductId(principal)
    if (productId !== undefined) {
      await this.#requireProduct(principal, productId)
    }
    const scope: StatsScope = productId === undefined ? undefined : { productId }
    const [stored, figures] = await Promise.all([
      this.#store.days(from, to, scope),
      this.#store.now(now, new Date(now.getTime() + expiringSoonMs), scope),
    ])
    const byDay = new Map(stored.map((row) => [row.day, row.counts]))
    const totals = countedActivities.map(() => 0)
    const days = Array.from({ length }, (_, index) => {
      const date = dayOf(fromMs + index * dayMs)
      const counts = byDay.get(date) ?? totals.map(() => 0)
      counts.forEach((n, slot) => {
        totals[slot] = (totals[slot] ?? 0) + n
      })
      return { date, ...countsOf(counts) }
    })
    return {
      object: 'Stats',
      from,
      to,
      productId: productId ?? null,
      days,
      totals: countsOf(totals),
      now: { at: now.toISOString(), ...figures },
    }
  }

  async #requireProduct(principal: Principal, productId: ProductId): Promise<void> {
    if (!canSeeProduct(principal, productId) || (await this.#products.findProduct(productId)) === undefined) {
      throw new DomainError('product_not_found', `No product ${productId} is visible to this API key.`)
    }
  }
}

function countsOf(counts: readonly number[]): StatsCounts {
  return Object.fromEntries(countedActivities.map((what, slot) => [what, counts[slot] ?? 0])) as StatsCounts
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

/** The start of a `YYYY-MM-DD` day (the schema checked the shape) in ms; 400 for a day the calendar lacks. */
function dayStartMs(day: string, pointer: string): number {
  const ms = Date.parse(`${day}T00:00:00.000Z`)
  if (Number.isNaN(ms) || dayOf(ms) !== day) {
    throw new InvalidInputError(pointer, `${day} is not a day of the calendar.`)
  }
  return ms
}

/**
 * Every `statsFlushMs`: this process's counts, stored. The last flush is the app's when it closes
 * (app.ts), after the requests in flight finished and before the database closes.
 */
export function statsFlushJob(stats: StatsService): BackgroundJob {
  return {
    name: 'statistics flush',
    idleMs: statsFlushMs,
    tick: async () => {
      await stats.flush()
      return false
    },
  }
}
