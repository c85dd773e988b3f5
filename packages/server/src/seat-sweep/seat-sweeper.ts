import type { BackgroundJob } from '../core/background-loop.js'
import type { SeatSweepService } from './seat-sweep-service.js'

/** How often each process sweeps; a full batch is followed at once by the next. */
export const sweepIntervalMs = 30_000

/**
 * The sweep of lapsed floating seats, as background work of every serving process. Nothing waits on
 * it: lapsed seats are ignored by every read and reclaimed by activations without it.
 */
export function seatSweepJob(service: SeatSweepService, intervalMs = sweepIntervalMs): BackgroundJob {
  return {
    name: 'sweeping lapsed seats',
    idleMs: intervalMs,
    async tick(log) {
      const { removed, isBatchFull } = await service.tick()
      if (removed.length > 0) {
        log.info({ removed: removed.length }, 'removed lapsed floating seats')
      }
      return isBatchFull
    },
  }
}
