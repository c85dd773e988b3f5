import type { LicenseId } from '@keyturn/protocol'
import type { Event } from '../core/unit-of-work.js'

export type IncrementOutcome =
  | { readonly kind: 'incremented'; readonly uses: number }
  /** Nothing was added: `uses` plus the increment would pass `maxUses`. */
  | { readonly kind: 'limit_reached'; readonly uses: number; readonly maxUses: number }

/** Storage port for metered usage: the `uses` counter of a license. */
export interface UsageStore {
  /**
   * Adds `increment` to the license's uses unless that would pass its maxUses, as one guarded
   * statement (concurrent increments never overshoot), and writes `events` with it
   * (`UnitOfWork.writeOne`: on PostgreSQL in that same statement, no transaction around it). Each
   * event's data must carry `uses`: the store sets it to the count this increment made, which a
   * concurrent increment may have moved since the caller's read. A refused increment writes nothing.
   * Undefined if the license does not exist.
   */
  increment(
    licenseId: LicenseId,
    increment: number,
    events: readonly Event[],
  ): Promise<IncrementOutcome | undefined>
  /** Sets uses to 0 and usesResetAt to `at`; false if the license does not exist. */
  reset(licenseId: LicenseId, at: Date): Promise<boolean>
}
