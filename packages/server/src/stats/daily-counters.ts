import type { ProductId } from '@keyturn/protocol'
import type { ActivityCounts, CountedActivity } from '../core/activity-counts.js'
import type { Clock } from '../core/clock.js'

/** The counted activities, in the order of a row's counts. */
export const countedActivities: readonly CountedActivity[] = [
  'validationsValid',
  'validationsInvalid',
  'activations',
  'deactivations',
  'licensesCreated',
  'licensesRenewed',
  'licensesRevoked',
  'licensesSold',
  'providerRenewals',
  'paymentFailures',
  'refundRevocations',
]

const slotOf: Readonly<Record<CountedActivity, number>> = Object.fromEntries(
  countedActivities.map((what, slot) => [what, slot]),
) as Record<CountedActivity, number>

/** One product's counts of one UTC day, in `countedActivities` order. */
export interface DailyCountRow {
  readonly productId: ProductId
  /** `YYYY-MM-DD`, UTC. */
  readonly day: string
  readonly counts: readonly number[]
}

interface Pending {
  readonly productId: ProductId
  readonly day: string
  readonly counts: number[]
}

const dayMs = 86_400_000

/**
 * This process's counts not yet written (docs/decisions/0044-daily-stats.md): a request adds one
 * to a number in a map; the flush job (stats-service.ts) takes them all every few seconds and adds
 * them to the stored rows. The UTC day is worked out once per day, not per count.
 */
export class DailyCounters implements ActivityCounts {
  readonly #clock: Clock
  /** Pending counts by day, then by product. */
  #byDay = new Map<string, Map<ProductId, Pending>>()
  /** The current day's map (in `#byDay`): a count looks up its product only. */
  #today = new Map<ProductId, Pending>()
  #day = ''
  #dayStart = 0
  #dayEnd = 0

  constructor(clock: Clock) {
    this.#clock = clock
  }

  count(productId: ProductId, what: CountedActivity): void {
    const at = this.#clock.now().getTime()
    if (at < this.#dayStart || at >= this.#dayEnd) {
      this.#dayStart = at - (at % dayMs)
      this.#dayEnd = this.#dayStart + dayMs
      this.#day = new Date(this.#dayStart).toISOString().slice(0, 10)
      this.#today = this.#dayMap(this.#day)
    }
    let pending = this.#today.get(productId)
    if (pending === undefined) {
      pending = { productId, day: this.#day, counts: countedActivities.map(() => 0) }
      this.#today.set(productId, pending)
    }
    pending.counts[slotOf[what]] = (pending.counts[slotOf[what]] ?? 0) + 1
  }

  /** Every pending count, removed; give them `back` if writing them failed. */
  take(): DailyCountRow[] {
    const taken = [...this.#byDay.values()].flatMap((products) => [...products.values()])
    this.#byDay = new Map()
    this.#today = this.#dayMap(this.#day)
    return taken
  }

  /** Counts taken but not written: added again to what was counted since. */
  back(rows: readonly DailyCountRow[]): void {
    for (const row of rows) {
      const products = this.#dayMap(row.day)
      const pending = products.get(row.productId)
      if (pending === undefined) {
        products.set(row.productId, { productId: row.productId, day: row.day, counts: [...row.counts] })
      } else {
        row.counts.forEach((n, slot) => {
          pending.counts[slot] = (pending.counts[slot] ?? 0) + n
        })
      }
    }
  }

  #dayMap(day: string): Map<ProductId, Pending> {
    let products = this.#byDay.get(day)
    if (products === undefined) {
      products = new Map()
      this.#byDay.set(day, products)
    }
    return products
  }
}
