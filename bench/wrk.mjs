/**
 * The second load generator: wrk (Debian's `wrk`, C with a Lua script), so a latency tail that one
 * generator hides shows in the other. autocannon runs in Node and shares its timing quirks with the
 * server; wrk measures from outside Node. Same requests as the autocannon runs (picked at random
 * from the scenario's pool), same connection count, two load threads.
 *
 * wrk has no warm-up: a warm-up run, then the measured run, with the server's CPU time read around
 * the measured one.
 */
import { execFileSync, spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { onCleanup } from './cleanup.mjs'
import { assertLoopback } from './net.mjs'
import { cpuSeconds } from './servers.mjs'

/** The wrk binary's path, or undefined when it is not installed (the wrk rows are then skipped). */
export function findWrk() {
  try {
    return execFileSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).trim() || undefined
  } catch {
    return undefined
  }
}

/**
 * Picks one of the pool's requests at random per request; prints the run as one JSON line
 * (latencies in µs, as wrk keeps them). The pool file has one request per line: path, a tab, body.
 */
const script = `
local pool = {}
local counter = 0
function init(args)
  for line in io.lines(args[1]) do
    local tab = line:find("\\t", 1, true)
    local body = line:sub(tab + 1)
    pool[#pool + 1] = wrk.format(nil, line:sub(1, tab - 1), nil, body ~= "" and body or nil)
  end
  math.randomseed(os.time() * 1000 + math.floor(os.clock() * 1e6))
end
function request()
  return pool[math.random(#pool)]
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"durationUs":%d,"requests":%d,"non2xx":%d,"errors":%d,"timeouts":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%f}\\n',
    summary.duration, summary.requests, e.status, e.connect + e.read + e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
`

let runs = 0

/**
 * One wrk run against `server` (`{ url, pid }`) with a scenario's prepared load (`{ method, apiKey,
 * headers, requests }`) and `settings` (`{ connections, warmupSeconds, durationSeconds }`).
 * Resolves to `{ rps, requests, latency: { p50, p90, p99, max, mean } (ms), non2xx, errors,
 * timeouts, serverCpu }`, the shape runLoad gives.
 */
export async function runWrk(wrk, server, { method, apiKey, headers, requests }, settings, workDir) {
  const url = assertLoopback(server.url)
  const id = ++runs
  const poolFile = join(workDir, `wrk-pool-${id}.txt`)
  writeFileSync(
    poolFile,
    `${requests.map((request) => `${request.path}\t${request.body === undefined ? '' : JSON.stringify(request.body)}`).join('\n')}\n`,
  )
  const scriptFile = join(workDir, `wrk-${id}.lua`)
  const allHeaders = {
    ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
    ...(requests.some((request) => request.body !== undefined) ? { 'content-type': 'application/json' } : {}),
    ...headers,
  }
  writeFileSync(
    scriptFile,
    `wrk.method = ${JSON.stringify(method)}\n${Object.entries(allHeaders)
      .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(String(value))}`)
      .join('\n')}\n${script}`,
  )
  const args = (seconds) => [
    '--threads',
    '2',
    '--connections',
    String(settings.connections),
    '--duration',
    `${Math.max(1, Math.round(seconds))}s`,
    '--timeout',
    '30s',
    '--script',
    scriptFile,
    url,
    '--',
    poolFile,
  ]
  if (settings.warmupSeconds >= 0.5) {
    await runOnce(wrk, args(settings.warmupSeconds), settings.warmupSeconds + 60)
  }
  const before = cpuSeconds(server.pid)
  const run = await runOnce(wrk, args(settings.durationSeconds), settings.durationSeconds + 60)
  const after = cpuSeconds(server.pid)
  const seconds = run.durationUs / 1e6
  return {
    seconds,
    requests: run.requests,
    rps: run.requests / seconds,
    latency: {
      mean: run.mean / 1000,
      p50: run.p50 / 1000,
      p90: run.p90 / 1000,
      p99: run.p99 / 1000,
      max: run.max / 1000,
    },
    non2xx: run.non2xx,
    errors: run.errors,
    timeouts: run.timeouts,
    serverCpu: { seconds: after - before, microsecondsPerRequest: ((after - before) / run.requests) * 1e6 },
  }
}

function runOnce(wrk, args, limitSeconds) {
  const child = spawn(wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const stop = onCleanup('wrk', () => child.exitCode === null && child.kill('SIGKILL'))
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr = `${stderr}${chunk}`.slice(-10_000)
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), limitSeconds * 1000)
  return new Promise((resolveRun, rejectRun) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      void stop()
      const line = stdout.split('\n').find((candidate) => candidate.startsWith('{"durationUs"'))
      if (code !== 0 || line === undefined) {
        rejectRun(new Error(`wrk exited (${signal ?? code}):\n${stdout.slice(-2000)}\n${stderr}`))
        return
      }
      resolveRun(JSON.parse(line))
    })
  })
}
