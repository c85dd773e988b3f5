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
import { sampleRss, waitUntilIdle } from './servers.mjs'

const worker = resolve(import.meta.dirname, 'load-worker.mjs')
let runs = 0

/**
 * Drives `requests` (`[{ path, body? }]`, one picked at random per request) at `server`
 * (`{ url, pid }`) with `settings` (`{ connections, warmupSeconds, durationSeconds }`).
 * Resolves to the load worker's numbers plus `rss: { peak, mean }` in MiB and `isIdleAfter`: false
 * when the server was still busy with the run's last requests 20 s after it.
 */
export async function runLoad(server, { method, apiKey, requests, idlePath }, settings, workDir) {
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
  let result
  try {
    result = await runWorker(specFile, settings.warmupSeconds + settings.durationSeconds + 90)
  } finally {
    result = { ...result, rss: rss.stop() }
  }
  return { ...result, isIdleAfter: await waitUntilIdle(`${server.url}${idlePath}`, server.pid) }
}

function runWorker(specFile, limitSeconds) {
  const child = spawn(process.execPath, [worker, specFile], { stdio: ['ignore', 'pipe', 'pipe'] })
  const stop = onCleanup('load generator', () => child.exitCode === null && child.kill('SIGKILL'))
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
      if (code !== 0) {
        rejectRun(new Error(`load generator exited (${signal ?? code}):\n${stderr}`))
        return
      }
      resolveRun(JSON.parse(stdout))
    })
  })
}
