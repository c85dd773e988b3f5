/**
 * The load generator, its own process (so it never shares an event loop with the server or with
 * the process that samples the server): reads a load spec (JSON file named by argv[2]), runs one
 * autocannon run of warm-up plus measurement, prints `measure-start` and `measure-end` when the
 * measured time starts and ends, then the measurement as one JSON line.
 *
 * Warm-up and measurement are one continuous run: only responses that arrive after the warm-up
 * count. (Two runs would leave the warm-up's in-flight requests queued on the server while the
 * measurement starts.)
 *
 * Spec: { url, connections, warmupSeconds, durationSeconds, timeoutSeconds, method, headers,
 *         requests: [{ path, body? }], overallRate? } — each request picks one of `requests` at
 *         random; a body's `freshValue` (bench/net.mjs) is replaced by new random digits each time.
 *         With `overallRate` (requests per second, all connections together) the load is offered at
 *         that fixed rate instead of as fast as the server answers.
 */
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import { freshValue } from './net.mjs'

const spec = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8'))
const { hostname } = new URL(spec.url)
if (hostname !== '127.0.0.1' && hostname !== 'localhost') {
  throw new Error(`load only goes to loopback addresses, not ${hostname}`)
}

const items = spec.requests.map((item) => ({ ...item, fresh: item.body?.includes(freshValue) === true }))
function pick(request) {
  const item = items[Math.floor(Math.random() * items.length)]
  request.path = item.path
  if (item.body !== undefined) {
    request.body = item.fresh ? item.body.replaceAll(freshValue, randomBytes(16).toString('hex')) : item.body
  }
  return request
}

const latencies = []
const statusCodes = {}
let errors = 0
let timeouts = 0
let measuring = false
let measureStart = 0
let measureEnd = 0

const instance = autocannon(
  {
    url: spec.url,
    connections: spec.connections,
    duration: spec.warmupSeconds + spec.durationSeconds,
    timeout: spec.timeoutSeconds,
    ...(spec.overallRate === undefined ? {} : { overallRate: spec.overallRate }),
    headers: spec.headers,
    requests: [{ method: spec.method, setupRequest: pick }],
  },
  () => {},
)
instance.on('response', (_client, statusCode, _bytes, responseTime) => {
  if (measuring) {
    latencies.push(responseTime)
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1
  }
})
instance.on('reqError', (error) => {
  if (measuring) {
    errors++
    if (error.message === 'request timed out') {
      timeouts++
    }
  }
})
// The parent reads the server's CPU time at these two marks.
setTimeout(() => {
  measuring = true
  measureStart = performance.now()
  process.stdout.write('measure-start\n')
}, spec.warmupSeconds * 1000)
const endMeasuring = () => {
  if (measureEnd === 0) {
    measuring = false
    measureEnd = performance.now()
    process.stdout.write('measure-end\n')
  }
}
setTimeout(endMeasuring, (spec.warmupSeconds + spec.durationSeconds) * 1000)
await new Promise((resolve) => instance.once('done', resolve))
endMeasuring()

latencies.sort((a, b) => a - b)
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
const seconds = (measureEnd - measureStart) / 1000
const ok = Object.entries(statusCodes)
  .filter(([code]) => code.startsWith('2'))
  .reduce((sum, [, n]) => sum + n, 0)
process.stdout.write(
  `${JSON.stringify({
    seconds,
    requests: latencies.length,
    rps: latencies.length / seconds,
    latency: {
      mean: latencies.length === 0 ? undefined : latencies.reduce((a, b) => a + b, 0) / latencies.length,
      p50: at(0.5),
      p90: at(0.9),
      p99: at(0.99),
      max: latencies.at(-1),
    },
    non2xx: latencies.length - ok,
    errors,
    timeouts,
    statusCodes,
  })}\n`,
)
