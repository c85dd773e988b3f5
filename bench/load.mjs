/**
 * One load run against a server: the load generator (bench/load-worker.mjs, autocannon) in its own
 * process, the server's RSS sampled meanwhile, then a wait until the server is idle again so the
 * next run starts clean.
 */
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { onCleanup } from './cleanup.mjs'
import { assertLoopback } from './net.mjs'
import { cpuSeconds, sampleRss, waitUntilIdle } from './servers.mjs'

const worker = resolve(import.meta.dirname, 'load-worker.mjs')
let runs = 0

/**
 * Drives `requests` (`[{ path, body? }]`, one picked at random per request) at `server`
 * (`{ url, pid }`) with `settings` (`{ connections, warmupSeconds, durationSeconds }`).
 * Resolves to the load worker's numbers plus `rss: { peak, mean }` in MiB, `serverCpu` (the server's
 * CPU seconds in the measured time, and per response: less sensitive to other load on the machine
 * than requests per second) and `isIdleAfter`: false
 * when the server was still busy with the run's last requests 20 s after it.
 */
export async function runLoad(server, { method, apiKey, headers, requests, idlePath }, settings, workDir) {
  const specFile = join(workDir, `load-${++runs}.json`)
  writeFileSync(
    specFile,
    JSON.stringify({
      url: assertLoopback(server.url),
      connections: settings.connections,
      warmupSeconds: settings.warmupSeconds,
      durationSeconds: settings.durationSeconds,
      timeoutSeconds: 30,
      ...(settings.overallRate === undefined ? {} : { overallRate: settings.overallRate }),
      method,
      headers: {
        ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
        ...headers,
        ...(requests.some((request) => request.body !== undefined)
          ? { 'content-type': 'application/json' }
          : {}),
      },
      requests: requests.map((request) => ({
        path: request.path,
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      })),
    }),
  )
  const rss = sampleRss(server.pid)
  const cpu = { start: undefined, end: undefined }
  const scrapes = { start: undefined, end: undefined }
  let result
  try {
    result = await runWorker(specFile, settings.warmupSeconds + settings.durationSeconds + 90, (mark) => {
      const at = mark === 'measure-start' ? 'start' : 'end'
      cpu[at] = cpuSeconds(server.pid)
      scrapes[at] = scrapeRuntime(server.url)
    })
  } finally {
    result = { ...result, rss: rss.stop() }
  }
  const runtime = runtimeBetween(await scrapes.start, await scrapes.end)
  if (runtime !== undefined) {
    result.runtime = runtime
  }
  if (cpu.start !== undefined && cpu.end !== undefined && result.requests > 0) {
    result.serverCpu = {
      seconds: cpu.end - cpu.start,
      microsecondsPerRequest: ((cpu.end - cpu.start) / result.requests) * 1e6,
    }
  }
  return { ...result, isIdleAfter: await waitUntilIdle(`${server.url}${idlePath}`, server.pid) }
}

/**
 * The server's event-loop delay and garbage collection, from its own `/metrics` (prom-client's
 * default metrics: they start with the first scrape, and the event-loop histogram restarts at
 * every scrape, so a scrape at the start of the measured time and one at its end bound exactly
 * that time). Servers without `/metrics` (the ceilings) give undefined.
 */
async function scrapeRuntime(url) {
  try {
    const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })
    return response.ok ? await response.text() : undefined
  } catch {
    return undefined
  }
}

/** A sample's value in a Prometheus text exposition (the first series of that name and labels). */
function sample(text, name) {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1).split(' ')[0])
}

/** prom-client's default `eventLoopMonitoringPrecision`, in ms. */
const eventLoopSampleMs = 10

/**
 * The measured time's event-loop delay (p50, p99 and max, ms) and GC pause time per kind (ms,
 * and ms per second measured), from the scrapes at its start and end.
 */
function runtimeBetween(start, end) {
  if (start === undefined || end === undefined) {
    return undefined
  }
  // prom-client's histogram (perf_hooks.monitorEventLoopDelay) records the time between two of its
  // timer's turns, which it asks for every `eventLoopMonitoringPrecision` (10 ms, the default the
  // server keeps): an idle process reads p50 ≈ 10.1 ms. The delay is what exceeds that interval.
  const lag = (quantile) => {
    const seconds = sample(end, `nodejs_eventloop_lag_${quantile}_seconds`)
    return seconds === undefined ? undefined : Math.max(0, seconds * 1000 - eventLoopSampleMs)
  }
  const gc = {}
  for (const kind of ['minor', 'major', 'incremental', 'weakcb']) {
    const name = `nodejs_gc_duration_seconds_sum{kind="${kind}"}`
    const after = sample(end, name)
    if (after !== undefined) {
      gc[kind] = (after - (sample(start, name) ?? 0)) * 1000
    }
  }
  return { eventLoopDelay: { p50: lag('p50'), p99: lag('p99'), max: lag('max') }, gcMs: gc }
}

/** `onMark` gets the worker's `measure-start` and `measure-end` lines as they come. */
function runWorker(specFile, limitSeconds, onMark) {
  const child = spawn(process.execPath, [worker, specFile], { stdio: ['ignore', 'pipe', 'pipe'] })
  const stop = onCleanup('load generator', () => child.exitCode === null && child.kill('SIGKILL'))
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    stdout += chunk
    let newline = stdout.indexOf('\n')
    while (newline >= 0 && stdout.startsWith('measure-')) {
      onMark(stdout.slice(0, newline))
      stdout = stdout.slice(newline + 1)
      newline = stdout.indexOf('\n')
    }
  })
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr = `${stderr}${chunk}`.slice(-10_000)
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), limitSeconds * 1000)
  return new Promise((resolveRun, rejectRun) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      void stop()
      if (code !== 0) {
        rejectRun(new Error(`load generator exited (${signal ?? code}):\n${stderr}`))
        return
      }
      resolveRun(JSON.parse(stdout))
    })
  })
}
