import type { ActivationId, LicenseId } from '@keyturn/protocol'
import type { Activation } from '../activations/activation.js'
import { toActivationResource } from '../activations/activation-resource.js'
import type { Clock } from '../core/clock.js'
import { systemActor, type UnitOfWork } from '../core/unit-of-work.js'
import type { SeatSweepStore } from './seat-sweep-store.js'

/** Lapsed activations one tick removes at most: a tick stays short however many seats lapsed. */
export const defaultSweepBatchSize = 500

export interface SeatSweepServiceDeps {
  readonly store: SeatSweepStore
  /** Removals: each license's lapsed activations and their `activation.expired` events in one transaction. */
  readonly storage: UnitOfWork<{ readonly sweep: SeatSweepStore }>
  readonly clock: Clock
  readonly batchSize?: number
}

export interface SweepResult {
  /** The activations removed by this tick. */
  readonly removed: readonly Activation[]
  /** The tick found a full batch: more lapsed activations may be waiting. */
  readonly isBatchFull: boolean
}

/**
 * Removes lapsed floating seats (activations whose lease ended without a heartbeat), a bounded
 * batch per tick. They hold no seat already (every read ignores them, a new activation reclaims
 * them): the sweep only keeps the table and the stored counts small. Safe in every process at once.
 */
export class SeatSweepService {
  readonly #store: SeatSweepStore
  readonly #storage: UnitOfWork<{ readonly sweep: SeatSweepStore }>
  readonly #clock: Clock
  readonly #batchSize: number

  constructor(deps: SeatSweepServiceDeps) {
    this.#store = deps.store
    this.#storage = deps.storage
    this.#clock = deps.clock
    this.#batchSize = deps.batchSize ?? defaultSweepBatchSize
  }

  async tick(): Promise<SweepResult> {
    const now = this.#clock.now()
    const lapsed = await this.#store.findLapsed(now, this.#batchSize)
    const byLicense = new Map<LicenseId, ActivationId[]>()
    for (const { id, licenseId } of lapsed) {
      byLicense.set(licenseId, [...(byLicense.get(licenseId) ?? []), id])
    }
    const removed: Activation[] = []
    for (const [licenseId, ids] of byLicense) {
      const gone = await this.#storage.write(systemActor('seat-sweep'), async ({ sweep, events }) => {
        const lapsed = await sweep.removeLapsed(licenseId, ids, now)
        for (const activation of lapsed) {
          events.record('activation.expired', activation.productId, toActivationResource(activation))
        }
        return lapsed
      })
      removed.push(...gone)
    }
    return { removed, isBatchFull: lapsed.length === this.#batchSize }
  }
}
