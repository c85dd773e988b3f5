import type { ActivationId, LicenseId } from '@keyturn/protocol'
import type { Activation } from '../activations/activation.js'

export interface LapsedActivation {
  readonly id: ActivationId
  readonly licenseId: LicenseId
}

/** Storage port of the sweep that removes lapsed floating seats. */
export interface SeatSweepStore {
  /** Up to `limit` activations whose lease ended at or before `at`, the longest lapsed first. */
  findLapsed(at: Date, limit: number): Promise<LapsedActivation[]>
  /**
   * Removes those of `ids` (all of one license) that are still lapsed at `at`, lowering the
   * license's activation count by as many, in one transaction; returns the removed ones. A
   * heartbeat or another sweep that got there first wins: its rows are left alone.
   */
  removeLapsed(licenseId: LicenseId, ids: readonly ActivationId[], at: Date): Promise<Activation[]>
}
