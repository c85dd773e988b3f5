import { type ActivityCounts, CountsAfterCommit } from '../core/activity-counts.js'
import type { BackgroundJob } from '../core/background-loop.js'
import type { Clock } from '../core/clock.js'
import type { ActionStorage } from './integration-actions.js'
import { actAndSettle, actionFor } from './integration-receiver.js'
import type { IntegrationStore } from './integration-store.js'

/** How many pending events one step tries. */
const batchSize = 20

/**
 * Tries the received events that could not be acted on yet (a renewal before its purchase, a
 * Paddle transaction before its customer's address) again, with backoff, until acted on or given
 * up (integration-receiver.ts, `pendingRetry`). Each attempt is one transaction with its changes.
 */
export class IntegrationRetries {
  readonly #integrations: IntegrationStore
  readonly #actions: ActionStorage
  readonly #clock: Clock
  readonly #counts: ActivityCounts

  constructor(deps: {
    readonly integrations: IntegrationStore
    readonly actions: ActionStorage
    readonly clock: Clock
    /** The daily statistics: what an action did, counted once its transaction committed. */
    readonly counts: ActivityCounts
  }) {
    this.#integrations = deps.integrations
    this.#actions = deps.actions
    this.#clock = deps.clock
    this.#counts = deps.counts
  }

  /** One step: the due pending events tried once each; `isBatchFull` when more may be due. */
  async tick(): Promise<{ readonly tried: number; readonly settled: number; readonly isBatchFull: boolean }> {
    const now = this.#clock.now()
    const due = await this.#integrations.duePending(now, batchSize)
    let tried = 0
    let settled = 0
    for (const { integrationId, dedupeKey } of due) {
      let counted = new CountsAfterCommit()
      const outcome = await this.#actions.write(
        { type: 'integration', id: integrationId },
        async (stores) => {
          counted = new CountsAfterCommit()
          const pending = await stores.integrations.claimPending(integrationId, dedupeKey, now)
          const stored = pending === undefined ? undefined : await stores.integrations.find(integrationId)
          if (pending === undefined || stored === undefined) {
            return undefined // taken by another process, or its integration was deleted
          }
          const action = actionFor(stored.integration.provider, pending.eventType, pending.payload)
          const context = { ...stores, counts: counted }
          return actAndSettle(context, stored.integration, dedupeKey, action, pending, '', now)
        },
      )
      counted.committed(this.#counts)
      if (outcome !== undefined) {
        tried += 1
        settled += outcome.status === 'pending' ? 0 : 1
      }
    }
    return { tried, settled, isBatchFull: due.length === batchSize }
  }
}

/** The background job of IntegrationRetries: a step a minute, at once while a batch was full. */
export function integrationRetryJob(retries: IntegrationRetries, intervalMs = 60_000): BackgroundJob {
  return {
    name: 'retrying pending provider events',
    idleMs: intervalMs,
    async tick(log) {
      const { tried, settled, isBatchFull } = await retries.tick()
      if (tried > 0) {
        log.info({ tried, settled }, 'retried pending provider events')
      }
      return isBatchFull
    },
  }
}
