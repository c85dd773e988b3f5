import cluster, { type Worker } from 'node:cluster'
import type { Output, Preparation } from '@keyturn/server'
import { type Command, InvalidArgumentError } from 'commander'
import { CommandFailed } from '../errors.js'
import type { Io } from '../io.js'

const maxWorkers = 64
/** A worker that dies is started again, at most this often a minute; past that the server stops (exit 1). */
const maxRestartsPerMinute = 5
/** Beyond the workers' own grace period for in-flight requests, before the primary kills them. */
const stopMarginMs = 5_000

/** What a worker tells the primary once it listens. */
interface ListeningMessage {
  readonly keyturn: 'listening'
  readonly url: string
}

/** `keyturn serve`: loads the server lazily, so API commands never load Fastify or the drivers. */
export function registerServe(program: Command, io: Io): void {
  program
    .command('serve')
    .description('Start the Keyturn server (configured by environment variables; flags override them)')
    .option('--port <port>', 'listen port (PORT)')
    .option('--host <host>', 'listen address (HOST)')
    .option('--database-url <url>', 'sqlite:<path>, sqlite::memory: or postgres://… (KEYTURN_DATABASE_URL)')
    .option(
      '--workers <n>',
      `processes serving the same port and database (node:cluster), 1 to ${maxWorkers}`,
      parseWorkers,
      1,
    )
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  KEYTURN_DATABASE_URL=sqlite:./data/keyturn.db keyturn serve --port 8080\n' +
        '  keyturn serve --workers 4    # one process per core; the first admin key is printed once',
    )
    .action(async (options: { port?: string; host?: string; databaseUrl?: string; workers: number }) => {
      const server = await import('@keyturn/server')
      const env = {
        ...io.env,
        ...(options.port === undefined ? {} : { PORT: options.port }),
        ...(options.host === undefined ? {} : { HOST: options.host }),
        ...(options.databaseUrl === undefined ? {} : { KEYTURN_DATABASE_URL: options.databaseUrl }),
      }
      const output: Output = { print: io.print, logs: io.logs }
      if (options.workers === 1) {
        // Listening for the signals first: one sent as soon as the banner is out stops it gracefully.
        const shutdown = io.untilShutdown()
        // serve prints where it listens (and the first admin key, once).
        const running = await server.serve(env, output)
        await shutdown
        await running.close()
      } else if (cluster.isPrimary) {
        const shutdown = io.untilShutdown()
        await supervise(
          () => server.prepare(env, output),
          options.workers,
          shutdown,
          io,
          server.shutdownGracePeriodMs,
        )
      } else {
        await work(() => server.serve(env, output, { isWorker: true }), io)
      }
    })
}

function parseWorkers(value: string): number {
  const workers = Number(value)
  if (!/^\d+$/.test(value) || workers < 1 || workers > maxWorkers) {
    throw new InvalidArgumentError(`Expected a whole number from 1 to ${maxWorkers}.`)
  }
  return workers
}

/** A worker: serves until SIGTERM (forwarded by the primary) or SIGINT, then leaves the cluster. */
async function work(serve: () => Promise<{ url: string; close(): Promise<void> }>, io: Io): Promise<void> {
  const worker = cluster.worker
  if (worker === null || worker === undefined) {
    throw new Error('keyturn serve --workers: not started by the primary')
  }
  const shutdown = io.untilShutdown()
  const running = await serve()
  const message: ListeningMessage = { keyturn: 'listening', url: running.url }
  worker.send(message)
  await shutdown
  await running.close()
  worker.disconnect() // the IPC channel is the last thing keeping the process alive
}

/**
 * The primary: prepares the database once, forks `count` workers on the same port, prints the
 * banner once they all listen, restarts a worker that dies (within `maxRestartsPerMinute`), and on
 * `shutdown` stops them all gracefully. Fails (exit 1) when a worker cannot start or keeps dying.
 */
async function supervise(
  prepare: () => Promise<Preparation>,
  count: number,
  shutdown: Promise<void>,
  io: Io,
  gracePeriodMs: number,
): Promise<void> {
  let isSignalled = false
  void shutdown.then(() => {
    isSignalled = true
  })
  const preparation = await prepare()
  if (isSignalled) {
    await preparation.close()
    return
  }

  let phase: 'starting' | 'running' | 'stopping' = 'starting'
  const live = new Set<Worker>()
  const listening = new Set<Worker>()
  const restarts: number[] = []
  const problems: string[] = []
  let fail: (problem: string) => void = () => {}
  const failed = new Promise<void>((resolve) => {
    fail = (problem) => {
      problems.push(problem)
      resolve()
    }
  })
  let started: (url: string) => void = () => {}
  const allListening = new Promise<string>((resolve) => {
    started = resolve
  })
  let allExited: () => void = () => {}
  const stopped = new Promise<void>((resolve) => {
    allExited = resolve
  })

  const fork = () => {
    const worker = cluster.fork()
    live.add(worker)
    return worker
  }
  const onMessage = (worker: Worker, message: unknown) => {
    if (!isListeningMessage(message)) {
      return
    }
    listening.add(worker)
    if (phase === 'starting' && listening.size === count) {
      started(message.url)
    } else if (phase === 'running') {
      io.printError(`keyturn serve: worker ${worker.process.pid} is listening in its place`)
    }
  }
  const onExit = (worker: Worker, code: number | null, signal: string | null) => {
    live.delete(worker)
    const how = signal === null ? `code ${code}` : signal
    const pid = worker.process.pid
    if (phase === 'stopping') {
      if (code !== 0 && signal === null && listening.has(worker)) {
        problems.push(`worker ${pid} exited with ${how} while stopping`)
      }
      if (live.size === 0) {
        allExited()
      }
    } else if (!listening.has(worker) && phase === 'starting') {
      fail(`worker ${pid} exited (${how}) before it listened`)
    } else {
      const now = Date.now()
      while (restarts.length > 0 && (restarts[0] ?? now) <= now - 60_000) {
        restarts.shift()
      }
      if (restarts.length >= maxRestartsPerMinute) {
        fail(
          `worker ${pid} exited (${how}); ${maxRestartsPerMinute} restarts within a minute already: stopping`,
        )
        return
      }
      restarts.push(now)
      const replacement = fork()
      io.printError(
        `keyturn serve: worker ${pid} exited unexpectedly (${how}); started ${replacement.process.pid} in its place`,
      )
    }
  }
  cluster.on('message', onMessage)
  cluster.on('exit', onExit)
  try {
    for (let index = 0; index < count; index++) {
      fork()
    }
    const url = await Promise.race([
      allListening,
      failed.then(() => undefined),
      shutdown.then(() => undefined),
    ])
    if (url !== undefined) {
      phase = 'running'
      io.print(
        `Keyturn started ${count} worker processes (pids ${[...live].map((w) => w.process.pid).join(', ')}).`,
      )
      await preparation.announce(url)
      await Promise.race([failed, shutdown])
    }
  } finally {
    phase = 'stopping'
    await stopAll(live, stopped, gracePeriodMs + stopMarginMs)
    cluster.off('message', onMessage)
    cluster.off('exit', onExit)
    await preparation.close()
  }
  if (problems.length > 0) {
    throw new CommandFailed(`keyturn serve: ${problems.join('; ')}`)
  }
}

/** SIGTERM to every worker (each finishes its in-flight requests); SIGKILL to any left after `limitMs`. */
async function stopAll(live: ReadonlySet<Worker>, stopped: Promise<void>, limitMs: number): Promise<void> {
  if (live.size === 0) {
    return
  }
  for (const worker of live) {
    worker.process.kill('SIGTERM')
  }
  let timer: NodeJS.Timeout | undefined
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      for (const worker of live) {
        worker.process.kill('SIGKILL')
      }
      resolve()
    }, limitMs)
  })
  await Promise.race([stopped, killed.then(() => stopped)])
  clearTimeout(timer)
}

function isListeningMessage(message: unknown): message is ListeningMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { keyturn?: unknown }).keyturn === 'listening' &&
    typeof (message as { url?: unknown }).url === 'string'
  )
}
