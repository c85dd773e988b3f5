/**
 * Runs `task` again and again until `signal` aborts: at once while it reports more work, else after
 * `idleMs`. Errors are reported and the loop goes on (the database may be briefly away). The timer
 * only paces the loop; what a task does depends on the injected Clock, so tests call tasks directly.
 */
export function runLoop(options: {
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
