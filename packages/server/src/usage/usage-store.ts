import type { LicenseId } from '@keyturn/protocol'

export type IncrementOutcome =
  | { readonly kind: 'incremented'; readonly uses: number }
  /** Nothing was added: `uses` plus the increment would pass `maxUses`. */
  | { readonly kind: 'limit_reached'; readonly uses: number; readonly maxUses: number }

/** Storage port for metered usage: the `uses` counter of a license. */
export interface UsageStore {
  /**
   * Adds `increment` to the license's uses unless that would pass its maxUses, as one guarded
   * statement (concurrent increments never overshoot). Undefined if the license does not exist.
   */
  increment(licenseId: LicenseId, increment: number): Promise<IncrementOutcome | undefined>
  /** Sets uses to 0 and usesResetAt to `at`; false if the license does not exist. */
  reset(licenseId: LicenseId, at: Date): Promise<boolean>
}
