/**
 * Everything the benchmark starts (processes, PostgreSQL, temporary folders) registers how to undo
 * it here, so it is undone on every way out: the normal end, a thrown error, Ctrl-C, SIGTERM, or an
 * uncaught exception. Undo steps run newest first and each runs at most once.
 */

/** @type {{ name: string, sync: () => void, graceful?: () => Promise<void>, done: boolean }[]} */
const steps = []

/**
 * Registers an undo step. `sync` must work inside a process 'exit' handler (no awaiting);
 * `graceful`, when given, is preferred on the normal way out. Returns a function that runs the
 * step now (gracefully) and forgets it.
 */
export function onCleanup(name, sync, graceful) {
  const step = { name, sync, graceful, done: false }
  steps.push(step)
  return async () => {
    if (step.done) {
      return
    }
    step.done = true
    steps.splice(steps.indexOf(step), 1)
    await (graceful ?? (async () => sync()))()
  }
}

/** The normal way out: every remaining step, newest first, gracefully where it can. */
export async function cleanupAll() {
  while (steps.length > 0) {
    const step = steps.pop()
    if (step === undefined || step.done) {
      continue
    }
    step.done = true
    try {
      await (step.graceful ?? (async () => step.sync()))()
    } catch (error) {
      console.error(`cleanup: ${step.name} failed: ${error instanceof Error ? error.message : error}`)
      runSync(step)
    }
  }
}

function runSync(step) {
  try {
    step.sync()
  } catch (error) {
    console.error(`cleanup: ${step.name} failed: ${error instanceof Error ? error.message : error}`)
  }
}

function cleanupAllSync() {
  while (steps.length > 0) {
    const step = steps.pop()
    if (step !== undefined && !step.done) {
      step.done = true
      runSync(step)
    }
  }
}

let installed = false

/** Installs the handlers for the abnormal ways out; call once, first thing. */
export function installExitHandlers() {
  if (installed) {
    return
  }
  installed = true
  process.on('exit', cleanupAllSync)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      console.error(`\nbench: ${signal}, stopping everything it started`)
      cleanupAllSync()
      process.exit(130)
    })
  }
}

/**
 * Runs a bench script's `main` with the exit handlers installed, prints what it throws, undoes
 * everything it started and exits: 0 when it finished, 1 when it threw.
 */
export async function runMain(main) {
  installExitHandlers()
  let exitCode = 1
  try {
    await main()
    exitCode = 0
  } catch (error) {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error)
  } finally {
    await cleanupAll()
  }
  process.exit(exitCode)
}
