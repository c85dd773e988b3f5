/**
 * The server processes under test, each its own process on a free loopback port: the real
 * `keyturn serve` (packages/cli/dist/main.js), the bare-Fastify ceiling (bench/bare-fastify.mjs)
 * and the one-lookup ceiling (bench/lookup-fastify.mjs).
 * Also their memory (VmRSS from /proc) and a wait until a server has worked off its backlog.
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { onCleanup } from './cleanup.mjs'
import { assertLoopback } from './net.mjs'

const root = resolve(import.meta.dirname, '..')
const startTimeoutMs = 60_000
const stopTimeoutMs = 20_000

/** The environment the benchmark's servers get: the caller's, without any Keyturn setting. */
function baseEnv() {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) =>
        !name.startsWith('KEYTURN_') && !['PORT', 'HOST', 'LOG_LEVEL', 'NODE_OPTIONS'].includes(name),
    ),
  )
}

/**
 * Starts `keyturn serve` on `databaseUrl` with the given admin key and master secret.
 * `nodeFlags` go to node itself (e.g. --cpu-prof); `workers` to `keyturn serve --workers` (the
 * memory and CPU below then count the primary and its workers together); `env` adds or overrides
 * settings (e.g. KEYTURN_*). Resolves to
 * `{ url, pid, stop }`.
 */
export function startKeyturn({
  databaseUrl,
  adminKey,
  secret,
  logLevel = 'warn',
  nodeFlags = [],
  workers,
  env = {},
}) {
  const args = [
    ...nodeFlags,
    join(root, 'packages/cli/dist/main.js'),
    'serve',
    ...(workers === undefined ? [] : ['--workers', String(workers)]),
  ]
  return startProcess('keyturn serve', args, {
    ...baseEnv(),
    PORT: '0',
    HOST: '127.0.0.1',
    KEYTURN_DATABASE_URL: databaseUrl,
    KEYTURN_ADMIN_KEY: adminKey,
    KEYTURN_SECRET: secret,
    LOG_LEVEL: logLevel,
    // The load comes from one admin key: a budget it never reaches, so the limiter runs but refuses nothing.
    KEYTURN_RATE_LIMIT_KEY_PER_MINUTE: '10000000',
    // The webhook-delivery scenario's receiver is on loopback, over http.
    KEYTURN_WEBHOOK_ALLOW_HTTP: 'true',
    KEYTURN_WEBHOOK_ALLOW_PRIVATE: 'true',
    ...env,
  })
}

/** Starts the ceiling: Fastify with one route and nothing else. */
export function startBareFastify() {
  return startProcess('bare Fastify', [join(root, 'bench/bare-fastify.mjs')], baseEnv())
}

/**
 * Starts the one-lookup ceiling (bench/lookup-fastify.mjs) on the benchmark's database: `location`
 * is `{ path }` (SQLite) or `{ url }` (PostgreSQL).
 */
export function startLookupFastify(location) {
  const target = location.url ?? location.path
  return startProcess('one-lookup Fastify', [join(root, 'bench/lookup-fastify.mjs'), target], baseEnv())
}

/** Spawns node with `args`; resolves once the process prints "listening on <url>". */
function startProcess(name, args, env) {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const exited = new Promise((resolveExit) =>
    child.once('exit', (code, signal) => resolveExit({ code, signal })),
  )
  const stop = onCleanup(
    name,
    () => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'),
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) {
        return
      }
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs)
      await exited
      clearTimeout(timer)
    },
  )
  return new Promise((resolveStart, rejectStart) => {
    const timer = setTimeout(() => {
      void stop()
      rejectStart(new Error(`${name} did not start within ${startTimeoutMs / 1000} s:\n${output}`))
    }, startTimeoutMs)
    const onData = (chunk) => {
      output += chunk
      const match = /listening on (http:\/\/[^\s)]+)/.exec(output)
      if (match?.[1] !== undefined) {
        clearTimeout(timer)
        child.stdout.off('data', onData)
        child.stdout.resume() // keep draining: a full pipe would block the server
        resolveStart({ url: assertLoopback(match[1]), pid: child.pid, stop, output: () => output })
      }
    }
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', onData)
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk) => {
      // Warnings and errors only (LOG_LEVEL=warn): keep the last few for the report of a failure.
      output = `${output}${chunk}`.slice(-20_000)
    })
    void exited.then(({ code, signal }) => {
      clearTimeout(timer)
      rejectStart(new Error(`${name} exited (${signal ?? code}) before listening:\n${output}`))
    })
  })
}

/**
 * The process and its descendants (the workers of `keyturn serve --workers`), from
 * /proc/<pid>/task/<tid>/children (Linux only).
 */
export function processTree(pid) {
  const tree = [pid]
  for (let index = 0; index < tree.length; index++) {
    try {
      for (const task of readdirSync(`/proc/${tree[index]}/task`)) {
        const children = readFileSync(`/proc/${tree[index]}/task/${task}/children`, 'utf8')
        tree.push(
          ...children
            .split(' ')
            .filter((child) => child !== '')
            .map(Number),
        )
      }
    } catch {}
  }
  return tree
}

/** Sums `measure(pid)` over the process and its descendants; undefined once the process is gone. */
function overTree(pid, measure) {
  const values = processTree(pid).map(measure)
  return values[0] === undefined ? undefined : values.reduce((sum, value) => sum + (value ?? 0), 0)
}

/** The resident set size in MiB of the process and its workers, or undefined once it is gone (Linux only). */
export function rssMiB(pid) {
  return overTree(pid, (one) => {
    try {
      const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${one}/status`, 'utf8'))
      return match?.[1] === undefined ? undefined : Number(match[1]) / 1024
    } catch {
      return undefined
    }
  })
}

/** Samples a process's RSS every `intervalMs` until stopped; `stop()` returns `{ peak, mean }` in MiB. */
export function sampleRss(pid, intervalMs = 200) {
  const samples = []
  const take = () => {
    const value = rssMiB(pid)
    if (value !== undefined) {
      samples.push(value)
    }
  }
  take()
  const timer = setInterval(take, intervalMs)
  return {
    stop() {
      clearInterval(timer)
      take()
      if (samples.length === 0) {
        return { peak: undefined, mean: undefined }
      }
      return { peak: Math.max(...samples), mean: samples.reduce((a, b) => a + b, 0) / samples.length }
    },
  }
}

/** The CPU time so far (user + system) of the process and its workers in seconds, or undefined once it is gone (Linux only). */
export function cpuSeconds(pid) {
  const ticks = cpuTicks(pid)
  return ticks === undefined ? undefined : ticks / clockTicksPerSecond
}

/** USER_HZ: 100 on every Linux Node runs on. */
const clockTicksPerSecond = 100

/** The CPU time so far (user + system) of the process and its workers, in clock ticks (Linux only). */
function cpuTicks(pid) {
  return overTree(pid, oneCpuTicks)
}

function oneCpuTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces) start at ")"; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return undefined
  }
}

/**
 * Waits until the server is idle: it uses (almost) no CPU for a quarter second while answering a
 * probe that goes through the database quickly, four times in a row. After a load run the server
 * may still be working through requests whose connections the load generator already closed.
 * Resolves to false if it is still busy after `maxMs`.
 */
export async function waitUntilIdle(url, pid, { maxMs = 20_000, quickMs = 25 } = {}) {
  const deadline = Date.now() + maxMs
  while (Date.now() < deadline) {
    const ticksBefore = cpuTicks(pid)
    let quick = 0
    for (let probe = 0; probe < 4; probe++) {
      const started = performance.now()
      try {
        await fetch(assertLoopback(url), { signal: AbortSignal.timeout(maxMs) }).then((r) => r.arrayBuffer())
      } catch {}
      quick += performance.now() - started < quickMs ? 1 : 0
      await new Promise((r) => setTimeout(r, 50))
    }
    const ticksAfter = cpuTicks(pid)
    // 100 ticks a second: at most 3 in the quarter second or more this took is about 10% of a core.
    const isQuiet = ticksBefore === undefined || ticksAfter === undefined || ticksAfter - ticksBefore <= 3
    if (quick === 4 && isQuiet) {
      return true
    }
  }
  return false
}
