import type { ProductId } from '@keyturn/protocol'
import type { DailyCountRow } from './daily-counters.js'

/** Which products' figures: every product (an admin key, no filter) or one. */
export type StatsScope = { readonly productId: ProductId } | undefined

export interface NowFigures {
  readonly activeMachines: number
  readonly licensesExpiringSoon: number
}

export interface StatsStore {
  /** Adds each row's counts to the stored row of its product and day (created at zero), in one transaction. */
  add(rows: readonly DailyCountRow[]): Promise<void>
  /** The stored rows from `from` to `to` (inclusive days), summed over products; days without a row are absent. */
  days(from: string, to: string, scope: StatsScope): Promise<Omit<DailyCountRow, 'productId'>[]>
  /** Activations holding a seat at `now`; licenses not revoked expiring in (`now`, `until`]. */
  now(now: Date, until: Date, scope: StatsScope): Promise<NowFigures>
}
