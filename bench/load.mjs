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
  let result
  try {
    result = await runWorker(specFile, settings.warmupSeconds + settings.durationSeconds + 90, (mark) => {
      cpu[mark === 'measure-start' ? 'start' : 'end'] = cpuSeconds(server.pid)
    })
  } finally {
    result = { ...result, rss: rss.stop() }
  }
  if (cpu.start !== undefined && cpu.end !== undefined && result.requests > 0) {
    result.serverCpu = {
      seconds: cpu.end - cpu.start,
      microsecondsPerRequest: ((cpu.end - cpu.start) / result.requests) * 1e6,
    }
  }
  return { ...result, isIdleAfter: await waitUntilIdle(`${server.url}${idlePath}`, server.pid) }
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
