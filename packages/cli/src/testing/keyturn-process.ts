/**
 * @module Runs the built `keyturn` binary as a child process, as a user would: CLI tests check its
 * stdout, stderr and exit code against a real server.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { childEnvironment } from '@keyturn/server/testing/server-process'

/** The built CLI (`npm test` builds first). */
export const keyturnBin = fileURLToPath(new URL('../../dist/main.js', import.meta.url))
/** Upper bound for one command (most take well under a second; a 5,000-row import on a busy machine, minutes). */
const patience = 300_000

export interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface Running {
  readonly child: ChildProcess
  /** Resolves when the process exits; rejects after `patience` (and kills it). */
  readonly finished: Promise<Finished>
}

/** Starts `keyturn <args>` with only PATH and `env` in its environment (childEnvironment). */
export function startKeyturn(args: readonly string[], env: Readonly<Record<string, string>> = {}): Running {
  const child = spawn(process.execPath, [keyturnBin, ...args], {
    env: childEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const finished = new Promise<Finished>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`keyturn ${args.join(' ')} still running after ${patience} ms\n${stdout}\n${stderr}`))
    }, patience)
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
  return { child, finished }
}

/** Runs `keyturn <args>` to the end. */
export function keyturn(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<Finished> {
  return startKeyturn(args, env).finished
}

/** A long-running `keyturn` (such as `serve`) whose output a test watches as it comes. */
export interface Watched {
  readonly child: ChildProcess
  stdout: string
  stderr: string
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Upper bound for waits on this process, in milliseconds. */
  readonly patience: number
}

/**
 * Starts `keyturn <args>` with only PATH and `env`; after the test, `beforeKill` runs (e.g. to stop
 * worker processes) and the process is killed if still running.
 */
export function watchKeyturn(
  t: TestContext,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  options: { readonly patience: number; readonly beforeKill?: (run: Watched) => void },
): Watched {
  const child = spawn(process.execPath, [keyturnBin, ...args], {
    env: childEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const run: Watched = { child, stdout: '', stderr: '', exit, patience: options.patience }
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    run.stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    run.stderr += chunk
  })
  t.after(() => {
    options.beforeKill?.(run)
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
    }
  })
  return run
}

/** Resolves with the first match of `pattern` in the output; fails after the run's patience or at exit. */
export function waitFor(
  run: Watched,
  pattern: RegExp,
  stream: 'stdout' | 'stderr' = 'stdout',
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const source = stream === 'stdout' ? run.child.stdout : run.child.stderr
    const check = () => {
      const match = run[stream].match(pattern)
      if (match) {
        cleanup()
        resolve(match)
      }
    }
    const timer = setTimeout(() => {
      cleanup()
      reject(
        new Error(`no ${pattern} within ${run.patience} ms\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`),
      )
    }, run.patience)
    const exited = () => {
      cleanup()
      reject(new Error(`exited before printing ${pattern}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`))
    }
    const cleanup = () => {
      clearTimeout(timer)
      source?.off('data', check)
      run.child.off('exit', exited)
    }
    source?.on('data', check)
    run.child.once('exit', exited)
    check()
  })
}

/** The exit of a watched run; fails after its patience. */
export function exitWithin(run: Watched): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`still running after ${run.patience} ms:\n${run.stdout}\n${run.stderr}`)),
      run.patience,
    )
  })
  return Promise.race([run.exit, timeout]).finally(() => clearTimeout(timer))
}

/** What one probe of a starting server saw: a status, or `refused` when nothing accepted the connection. */
export interface Probe {
  readonly readyz: number | 'refused'
  readonly api: number | 'refused'
}

/**
 * From a server's start until it prints its banner (or exits): asks `/readyz`, then an API route
 * with `secret`, again and again, and resolves to what each pair of requests saw, in order.
 */
export async function probeWhileStarting(run: Watched, baseUrl: string, secret: string): Promise<Probe[]> {
  const statusOf = async (path: string, headers: Record<string, string> = {}) => {
    try {
      const res = await fetch(`${baseUrl}${path}`, { headers, signal: AbortSignal.timeout(5_000) })
      await res.arrayBuffer()
      return res.status
    } catch {
      return 'refused' as const
    }
  }
  const probes: Probe[] = []
  const deadline = Date.now() + run.patience
  while (
    !/Keyturn is listening on/.test(run.stdout) &&
    run.child.exitCode === null &&
    Date.now() < deadline
  ) {
    const readyz = await statusOf('/readyz')
    const api = await statusOf('/api/v0/products', { authorization: `Bearer ${secret}` })
    probes.push({ readyz, api })
    if (readyz === 'refused') {
      await new Promise((resolve) => setTimeout(resolve, 5)) // the port is not open yet
    }
  }
  return probes
}
