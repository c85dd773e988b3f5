#!/usr/bin/env node
/**
 * What a signed answer costs, measured in one process for a busy machine: the real app
 * (buildApp with its rate limiter, as `keyturn serve` builds it) on a SQLite file, driven through
 * Fastify's `inject` (no sockets), in interleaved batches of the same validations unsigned and
 * signed (`Keyturn-Sign: ed25519` plus a nonce), with a bare Ed25519 sign of a signature-sized base
 * as the ceiling of what signing must cost. Each figure is the best (least disturbed) batch's CPU
 * time per operation of the event-loop thread (/proc/<pid>/task/<pid>, which is what bounds one
 * process's throughput) and of the whole process (every thread). `inflight` requests run at
 * once, as a loaded server sees them.
 *
 *   node bench/signing-cost.mjs [--batch=1000] [--rounds=15] [--inflight=50]
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../packages/server/dist/app.js'
import { systemClock } from '../packages/server/dist/core/clock.js'
import { deriveSecretKeys } from '../packages/server/dist/core/secrets.js'
import { memoryCounters } from '../packages/server/dist/protection/counters.js'
import { connect } from '../packages/server/dist/storage/connect.js'
import { migrateToLatest } from '../packages/server/dist/storage/migrate.js'

const options = { batch: 1000, rounds: 15, inflight: 50 }
for (const arg of process.argv.slice(2)) {
  const [name, value] = arg.replace(/^--/, '').split('=')
  if (!(name in options)) {
    throw new Error(`unknown option ${arg}`)
  }
  options[name] = Number(value)
}

/** utime + stime in µs of the main thread and of the process (clock ticks of 10 ms). */
function cpu() {
  const read = (path) => {
    const stat = readFileSync(`/proc/${path}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  }
  return { main: read(`self/task/${process.pid}`), process: read('self') }
}

const dir = mkdtempSync(join(tmpdir(), 'keyturn-signing-cost-'))
const connection = connect({ kind: 'sqlite', path: join(dir, 'keyturn.db') })
await migrateToLatest(connection)
const { app, services } = buildApp({
  db: connection.db,
  clock: systemClock,
  secretKeys: deriveSecretKeys(randomBytes(32).toString('base64url')),
  logger: false,
  protection: {
    keyPerMinute: 100_000_000,
    ipPerMinute: 100_000_000,
    guessLimit: 20,
    guessBlockSeconds: 900,
    counters: memoryCounters(),
  },
})
await app.ready()
const adminSecret = `kt_admin_cost${randomBytes(24).toString('base64url')}`
await services.apiKeys.bootstrapAdmin(adminSecret)
const authorization = `Bearer ${adminSecret}`
const product = await app.inject({
  method: 'POST',
  url: '/api/v0/products',
  headers: { authorization },
  payload: { name: 'Signing cost' },
})
const productId = product.json().id
const keys = []
for (let i = 0; i < 200; i++) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v0/licenses',
    headers: { authorization },
    payload: { productId },
  })
  keys.push(res.json().key)
}

const { privateKey } = generateKeyPairSync('ed25519')
const base = Buffer.from('x'.repeat(330)) // about the size of the signature base of a validate answer

async function injectBatch(signed, nonce = signed) {
  let next = 0
  const one = async () => {
    while (next < options.batch) {
      const key = keys[next++ % keys.length]
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers: signed ? { authorization, 'keyturn-sign': 'ed25519' } : { authorization },
        payload: nonce ? { key, productId, nonce: randomBytes(16).toString('hex') } : { key, productId },
      })
      if (res.statusCode !== 200 || (signed && res.headers.signature === undefined)) {
        throw new Error(`unexpected answer ${res.statusCode}: ${res.body}`)
      }
    }
  }
  await Promise.all(Array.from({ length: options.inflight }, one))
}

const runs = {
  'validate (unsigned)': () => injectBatch(false),
  'validate with a nonce, unsigned': () => injectBatch(false, true),
  'validate (signed answer)': () => injectBatch(true),
  'bare Ed25519 sign (node:crypto, sync)': async () => {
    for (let i = 0; i < options.batch; i++) {
      sign(null, base, privateKey)
    }
  },
}
const best = Object.fromEntries(
  Object.keys(runs).map((name) => [name, { main: Infinity, process: Infinity }]),
)
const loadStart = loadavg()[0]
for (let round = 0; round <= options.rounds; round++) {
  for (const [name, run] of Object.entries(runs)) {
    const before = cpu()
    await run()
    const after = cpu()
    if (round > 0) {
      // Round 0 warms up (JIT, statement cache).
      best[name].main = Math.min(best[name].main, (after.main - before.main) / options.batch)
      best[name].process = Math.min(best[name].process, (after.process - before.process) / options.batch)
    }
  }
}
await app.close()
await connection.close()
rmSync(dir, { recursive: true, force: true })

const unsigned = best['validate (unsigned)']
console.log(
  `Signing cost, in-process (inject), ${options.rounds} interleaved rounds of ${options.batch}, ${options.inflight} in flight; ` +
    `best round each; load average ${loadStart.toFixed(1)} → ${loadavg()[0].toFixed(1)}.\n`,
)
console.log(
  '| operation | CPU µs/op, event loop | CPU µs/op, process | unsigned / this (event loop) | unsigned / this (process) |',
)
console.log('| --- | ---: | ---: | ---: | ---: |')
for (const [name, measured] of Object.entries(best)) {
  const ratio = (a, b) => `${((100 * a) / b).toFixed(0)}%`
  const isValidate = name.startsWith('validate')
  console.log(
    `| ${name} | ${measured.main.toFixed(1)} | ${measured.process.toFixed(1)} | ${isValidate ? ratio(unsigned.main, measured.main) : ''} | ${isValidate ? ratio(unsigned.process, measured.process) : ''} |`,
  )
}
