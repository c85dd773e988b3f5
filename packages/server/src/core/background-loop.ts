/**
 * @module Background work of a serving process: each job is a bounded step (`tick`) that the loop
 * runs again and again, at once while the step says more work is waiting, else after the job's
 * `idleMs`. Jobs are coordinated through the database, so every `keyturn serve` process may run
 * them all. The features define their jobs; the composition root (app.ts) lists them and the serve
 * entry point starts them (`startBackgroundWork`).
 */

/** What a job may log (pino's shape, so a Fastify logger fits). */
export interface BackgroundLog {
  info(fields: object, message: string): void
  error(fields: object, message: string): void
}

export interface BackgroundJob {
  /** What the job does, for its error log line: "webhook delivery" → "webhook delivery failed; retrying". */
  readonly name: string
  /** The pause after a step that left no work waiting (or failed). */
  readonly idleMs: number
  /** How many loops run this job side by side in one process; default 1. */
  readonly loops?: number
  /**
   * One bounded step; true when more work is waiting (the loop steps again at once). A step that
   * throws is logged and retried after `idleMs` (the database may be briefly away). What a step
   * does depends on the injected Clock, so tests call the steps directly.
   */
  tick(log: BackgroundLog): Promise<boolean>
}

export interface BackgroundWork {
  /** Stops every loop; resolves once the steps in flight have finished. */
  stop(): Promise<void>
}

/**
 * Starts every loop of every job; they run until `stop`. A failed step is logged unless `isQuiet`
 * says the failure is already reported elsewhere (a database outage is logged once when it starts).
 */
export function startBackgroundWork(
  jobs: readonly BackgroundJob[],
  {
    log,
    isQuiet = () => false,
  }: { readonly log: BackgroundLog; readonly isQuiet?: (error: unknown) => boolean },
): BackgroundWork {
  const stopping = new AbortController()
  const loops = jobs.flatMap((job) =>
    Array.from({ length: job.loops ?? 1 }, () =>
      runLoop({
        task: () => job.tick(log),
        idleMs: job.idleMs,
        signal: stopping.signal,
        onError: (error) => {
          if (!isQuiet(error)) {
            log.error({ err: error }, `${job.name} failed; retrying`)
          }
        },
      }),
    ),
  )
  return {
    async stop() {
      stopping.abort()
      await Promise.all(loops)
    },
  }
}

/**
 * Runs `task` again and again until `signal` aborts: at once while it reports more work, else after
 * `idleMs`. Errors are reported and the loop goes on. The pause never keeps the process alive by
 * itself.
 */
function runLoop(options: {
  readonly task: () => Promise<boolean>
  readonly idleMs: number
  readonly signal: AbortSignal
  readonly onError: (error: unknown) => void
}): Promise<void> {
  const { task, idleMs, signal, onError } = options
  return (async () => {
    while (!signal.aborted) {
      let isBusy = false
      try {
        isBusy = await task()
      } catch (error) {
        onError(error)
      }
      if (!isBusy && !signal.aborted) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, idleMs)
          timer.unref?.()
          signal.addEventListener('abort', done, { once: true })
          function done() {
            clearTimeout(timer)
            signal.removeEventListener('abort', done)
            resolve()
          }
        })
      }
    }
  })()
}
