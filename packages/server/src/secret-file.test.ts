import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { Worker } from 'node:worker_threads'

it('gives every process starting at once the same, whole secret, and leaves only the secret file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-secret-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, 'keyturn.secret')
  const module = new URL('./secret-file.js', import.meta.url).href
  // Threads race on one file as processes would: each waits at a shared barrier, then creates it.
  const barrier = new Int32Array(new SharedArrayBuffer(4))
  const racers = 8
  const secrets = await Promise.all(
    Array.from(
      { length: racers },
      () =>
        new Promise<string>((resolve, reject) => {
          const worker = new Worker(
            `const { workerData, parentPort } = require('node:worker_threads')
             const barrier = workerData.barrier
             Atomics.add(barrier, 0, 1)
             while (Atomics.load(barrier, 0) < workerData.racers) {}
             import(workerData.module).then((m) => parentPort.postMessage(m.createSecretFile(workerData.path)))`,
            { eval: true, workerData: { barrier, racers, module, path } },
          )
          worker.once('message', resolve)
          worker.once('error', reject)
        }),
    ),
  )
  assert.equal(new Set(secrets).size, 1, 'one secret for all')
  assert.match(secrets[0] ?? '', /^[A-Za-z0-9_-]{43}$/)
  assert.deepEqual(readdirSync(dir), ['keyturn.secret'])
  assert.equal(statSync(path).mode & 0o777, 0o600)
})
