import { type ChildProcess, spawn } from 'node:child_process'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { heapFlagsFor } from '../entry/heap-flags.js'

// The built CLI, as `npm start` runs it (`npm test` builds first).
const cli = fileURLToPath(new URL('../../../cli/dist/main.js', import.meta.url))
/** Upper bound for a server process to start; it normally takes about a second. */
const patience = 30_000

export interface ServerProcess {
  readonly url: string
  readonly child: ChildProcess
  /** Everything the process printed so far (stdout and stderr): the banner, its links, the logs. */
  readonly output: () => string
}

/**
 * The whole environment of a `keyturn` child process: PATH and `env`, nothing else of the test's,
 * except NODE_COMPILE_CACHE when scripts/test.mjs set it (V8's compiled code of the modules, kept on
 * disk, so each of the suite's many processes starts with less work; behaviour is the same).
 */
export function childEnvironment(env: Readonly<Record<string, string>>): Record<string, string> {
  const cache = process.env.NODE_COMPILE_CACHE
  return {
    PATH: process.env.PATH ?? '',
    ...(cache === undefined ? {} : { NODE_COMPILE_CACHE: cache }),
    ...env,
  }
}

/**
 * Starts `keyturn serve` as its own process with `env`; stopped (SIGTERM, then SIGKILL) after the test.
 * Node starts with the heap flags `keyturn serve` would otherwise replace its process to get
 * (packages/cli/src/main.ts): the same server, without a second start of node (a fifth of a
 * second of CPU each; the suite starts dozens). The CLI's own tests start it as a user does.
 */
export async function startServerProcess(
  t: TestContext,
  env: Record<string, string>,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...heapFlagsFor(env), cli, 'serve'], {
    env: childEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), patience)
      await exited
      clearTimeout(timer)
    }
  })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`keyturn serve did not start:\n${output}`)), patience)
    const look = (chunk: string) => {
      output += chunk
      const match = /Keyturn is listening on (http:\/\/\S+?) /.exec(output)
      if (match?.[1] !== undefined) {
        clearTimeout(timer)
        resolve(match[1])
      }
    }
    child.stdout?.setEncoding('utf8').on('data', look)
    child.stderr?.setEncoding('utf8').on('data', look)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`keyturn serve exited with ${code}:\n${output}`))
    })
  })
  return { url, child, output: () => output }
}
