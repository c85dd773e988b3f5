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

/**
 * Where services report what happened, after it happened (the change committed, the verdict
 * reached): one in-memory increment, never I/O (stats/daily-counters.ts).
 */
export interface ActivityCounts {
  count(productId: ProductId, what: CountedActivity): void
}

/** For services built without statistics (unit tests). */
export const countNothing: ActivityCounts = { count: () => {} }
