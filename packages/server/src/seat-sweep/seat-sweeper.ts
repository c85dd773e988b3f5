import type { SeatSweepService, SweepResult } from './seat-sweep-service.js'

/** How often each process sweeps; a full batch is followed at once by the next. */
export const sweepIntervalMs = 30_000

export interface SeatSweeperOptions {
  readonly service: SeatSweepService
  /** Aborting it stops the loop; `stopped` resolves once a running tick has finished. */
  readonly signal: AbortSignal
  /** A failed tick (the database away, say) is reported here and retried at the next interval. */
  readonly onError: (error: unknown) => void
  readonly onSweep?: (result: SweepResult) => void
  readonly intervalMs?: number
}

/**
 * Runs the sweep in the background of `keyturn serve` until `signal` aborts. Nothing waits on it:
 * lapsed seats are ignored by every read and reclaimed by activations without it.
 */
export function startSeatSweeper(options: SeatSweeperOptions): { readonly stopped: Promise<void> } {
  const intervalMs = options.intervalMs ?? sweepIntervalMs
  const stopped = (async () => {
    while (!options.signal.aborted) {
      let isBatchFull = false
      try {
        const result = await options.service.tick()
        isBatchFull = result.isBatchFull
        options.onSweep?.(result)
      } catch (error) {
        options.onError(error)
      }
      await pause(isBatchFull ? 0 : intervalMs, options.signal)
    }
  })()
  return { stopped }
}

/** Resolves after `ms`, or at once when the signal aborts; never keeps the process alive by itself. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve()
      return
    }
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    timer.unref?.()
    signal.addEventListener('abort', done, { once: true })
  })
}
