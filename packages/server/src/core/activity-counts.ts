import type { ProductId } from '@keyturn/protocol'

/** What the daily statistics count, per product and UTC day (stats/). */
export type CountedActivity =
  | 'validationsValid'
  | 'validationsInvalid'
  | 'activations'
  | 'deactivations'
  | 'licensesCreated'
  | 'licensesRenewed'
  | 'licensesRevoked'
  | 'licensesSold'
  | 'providerRenewals'
  | 'paymentFailures'
  | 'refundRevocations'

/**
 * Where services report what happened, after it happened (the change committed, the verdict
 * reached): one in-memory increment, never I/O (stats/daily-counters.ts).
 */
export interface ActivityCounts {
  count(productId: ProductId, what: CountedActivity): void
}

/** For services built without statistics (unit tests). */
export const countNothing: ActivityCounts = { count: () => {} }

/**
 * Counts made inside a transaction, handed to the daily counters only once it committed: a
 * transaction rolled back counts nothing. Make a new one for each attempt of the transaction.
 */
export class CountsAfterCommit implements ActivityCounts {
  readonly #made: { readonly productId: ProductId; readonly what: CountedActivity }[] = []

  count(productId: ProductId, what: CountedActivity): void {
    this.#made.push({ productId, what })
  }

  /** Gives every count made to `counts` (call after the commit). */
  committed(counts: ActivityCounts): void {
    for (const { productId, what } of this.#made) {
      counts.count(productId, what)
    }
  }
}
