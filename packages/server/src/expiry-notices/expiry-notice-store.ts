import type { Event } from '../core/unit-of-work.js'
import type { License } from '../licenses/license.js'

/** One step of one notice day: the licenses it read, and whether a whole batch was read. */
export interface NoticeStep {
  readonly read: number
  readonly noticed: number
  readonly isBatchFull: boolean
}

/** Storage port of the expiry-notice job. */
export interface ExpiryNoticeStore {
  /**
   * In one transaction: reads up to `limit` licenses (revoked ones skipped) whose expiration date
   * is after the notice day's cursor and at or before `upto`, in expiry order, writes the events
   * `eventsOf` makes of them and moves the cursor past them. A cursor not there yet starts at
   * `startAt`. Concurrent steps of one notice day wait for each other (the cursor row's lock), so
   * each license gets each notice once.
   */
  step(request: {
    readonly days: number
    readonly startAt: Date
    readonly upto: Date
    readonly limit: number
    readonly eventsOf: (licenses: readonly License[]) => Event[]
  }): Promise<NoticeStep>
}
