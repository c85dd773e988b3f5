import type { BackgroundJob } from '../core/background-loop.js'
import type { Clock } from '../core/clock.js'
import type { EventStore } from './event-store.js'

/** Events deleted per statement, and statements per sweep: never one long DELETE over the log. */
const defaultBatchSize = 1_000
const defaultMaxBatches = 20
/** How often a process sweeps (each sweep is bounded; several processes sweeping is harmless). */
export const retentionSweepIntervalMs = 10 * 60 * 1000

/**
 * Deletes events older than KEYTURN_EVENT_RETENTION_DAYS, in small batches, at most
 * `batchSize × maxBatches` per sweep (the rest waits for the next). Events a webhook delivery still
 * waits for are kept until it is delivered or has failed for good.
 */
export class EventRetention {
  readonly #events: EventStore
  readonly #clock: Clock
  readonly #retentionMs: number
  readonly #batchSize: number
  readonly #maxBatches: number
  #lastSweep: number | undefined

  constructor(deps: {
    readonly events: EventStore
    readonly clock: Clock
    readonly retentionDays: number
    readonly batchSize?: number
    readonly maxBatches?: number
  }) {
    this.#events = deps.events
    this.#clock = deps.clock
    this.#retentionMs = deps.retentionDays * 24 * 60 * 60 * 1000
    this.#batchSize = deps.batchSize ?? defaultBatchSize
    this.#maxBatches = deps.maxBatches ?? defaultMaxBatches
  }

  /** Sweeps when the last sweep is `retentionSweepIntervalMs` old; returns how many events it deleted. */
  async tick(): Promise<number> {
    const now = this.#clock.now().getTime()
    if (this.#lastSweep !== undefined && now - this.#lastSweep < retentionSweepIntervalMs) {
      return 0
    }
    this.#lastSweep = now
    const cutoff = new Date(now - this.#retentionMs)
    let deleted = 0
    for (let batch = 0; batch < this.#maxBatches; batch++) {
      const count = await this.#events.deleteOlderThan(cutoff, this.#batchSize)
      deleted += count
      if (count < this.#batchSize) {
        break
      }
    }
    return deleted
  }
}

/** The retention sweep as background work of every serving process; the sweep paces itself. */
export function retentionJob(retention: EventRetention): BackgroundJob {
  return {
    name: 'event retention',
    idleMs: 60_000,
    async tick() {
      await retention.tick()
      return false
    },
  }
}
