#!/usr/bin/env node
/**
 * The CPU one validation costs inside Keyturn, without the network: each build (a checkout with
 * its dist/ built, optionally with extra environment) runs in a child process of its own, on a
 * SQLite database seeded by that build's bench/seed.mjs, and answers `app.inject` validations one
 * at a time (Fastify's whole request path: hooks, parsing, validation, the handler, the queries,
 * serialisation, the response headers; not Node's HTTP parser or the socket). The parent asks the
 * children for short batches in turn, round after round, and keeps each child's BEST batch (the one
 * the machine's other work disturbed least) and the median; on a shared machine the best batch is
 * the steady figure. Used to find which part of a request costs what.
 *
 *   node bench/inject-cost.mjs --builds=/tmp/kt-old,.,.:KT_X=1 [--only=validate|retrieve]
 *        [--rounds=30] [--batch=300] [--licenses=20000] [--profile=<folder>]
 *
 * `dir:NAME=value` gives that child the variable (several: `dir:A=1:B=2`).
 */
import { fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const childFlag = '--child'

if (process.argv[2] === childFlag) {
  await child(process.argv[3], process.argv[4], Number(process.argv[5]))
} else {
  await parent(process.argv.slice(2))
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

async function parent(argv) {
  const options = {
    builds: [],
    only: 'validate',
    rounds: 30,
    batch: 300,
    licenses: 20_000,
    profile: undefined,
  }
  for (const arg of argv) {
    const [name, value] = arg.replace(/^--/, '').split(/=(.*)/s)
    if (name === 'builds') {
      options.builds = value.split(',').map((spec) => {
        const [dir, ...env] = spec.split(':')
        return {
          dir: resolve(dir),
          env: Object.fromEntries(env.map((pair) => pair.split(/=(.*)/s).slice(0, 2))),
        }
      })
    } else if (name === 'profile') {
      options.profile = resolve(value) // a folder: each child writes its .cpuprofile there
    } else if (name === 'only') {
      options.only = value
    } else if (['rounds', 'batch', 'licenses'].includes(name)) {
      options[name] = Number(value)
    } else {
      throw new Error(`unknown option ${arg}`)
    }
  }
  const children = options.builds.map((build) => {
    const name = `${build.dir}${Object.entries(build.env)
      .map(([key, value]) => ` ${key}=${value}`)
      .join('')}`
    const proc = fork(import.meta.filename, [childFlag, build.dir, options.only, String(options.licenses)], {
      env: { ...process.env, ...build.env },
      execArgv: options.profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.profile}`],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    })
    const pending = []
    proc.on('message', (message) => pending.shift()?.resolve(message))
    proc.once('exit', (code) => {
      for (const waiting of pending.splice(0)) {
        waiting.reject(new Error(`${name} exited (${code})`))
      }
    })
    const ask = (message) =>
      new Promise((resolveAnswer, rejectAnswer) => {
        pending.push({ resolve: resolveAnswer, reject: rejectAnswer })
        proc.send(message)
      })
    return { name, proc, ask, batches: [] }
  })
  try {
    await Promise.all(children.map((one) => one.ask({ kind: 'ready' })))
    for (const one of children) {
      await one.ask({ kind: 'batch', size: options.batch }) // warm-up (JIT), not counted
      await one.ask({ kind: 'batch', size: options.batch })
    }
    const loadStart = loadavg()
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? children : [...children].reverse()
      for (const one of order) {
        one.batches.push(await one.ask({ kind: 'batch', size: options.batch }))
      }
    }
    const loadEnd = loadavg()
    console.log(
      `In-process ${options.only} (app.inject, one at a time, SQLite, ${options.licenses} licenses): ${options.rounds} rounds of ` +
        `${options.batch} per build; load average ${loadStart[0].toFixed(1)} → ${loadEnd[0].toFixed(1)}.\n`,
    )
    console.log(
      '| build | best batch: CPU µs/req | median batch: CPU µs/req | best vs first | median of paired differences µs |',
    )
    console.log('| --- | ---: | ---: | ---: | ---: |')
    const first = children[0]
    const best = (one) => Math.min(...one.batches.map((b) => b.cpuUs))
    for (const one of children) {
      const paired = median(one.batches.map((b, index) => b.cpuUs - first.batches[index].cpuUs))
      console.log(
        `| ${one.name} | ${best(one).toFixed(1)} | ${median(one.batches.map((b) => b.cpuUs)).toFixed(1)} | ` +
          `${best(one) - best(first) >= 0 ? '+' : ''}${(best(one) - best(first)).toFixed(1)} | ${paired >= 0 ? '+' : ''}${paired.toFixed(1)} |`,
      )
    }
  } finally {
    for (const one of children) {
      one.proc.kill('SIGTERM')
    }
  }
}

/** One build: seed, build the app, then answer batches of validations, measured in CPU time. */
async function child(root, scenario, licenses) {
  const module = (path) => import(pathToFileURL(join(root, path)).href)
  const [
    { createDatabase, licenseSeeder },
    { buildApp },
    { connect },
    { systemClock },
    { deriveSecretKeys },
  ] = await Promise.all([
    module('bench/seed.mjs'),
    module('packages/server/dist/app.js'),
    module('packages/server/dist/storage/connect.js'),
    module('packages/server/dist/core/clock.js'),
    module('packages/server/dist/core/secrets.js'),
  ])
  let memoryCounters
  try {
    ;({ memoryCounters } = await module('packages/server/dist/protection/counters.js'))
  } catch {}
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-inject-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  process.once('SIGTERM', () => process.exit(0))
  process.once('disconnect', () => process.exit(0))
  const database = await createDatabase('sqlite', 'inject', { dir })
  const connection = connect(database.location)
  const adminKey = `kt_admin_bench${randomBytes(24).toString('base64url')}`
  const { app, services } = buildApp({
    db: connection.db,
    clock: systemClock,
    secretKeys: deriveSecretKeys(randomBytes(32).toString('base64url')),
    logger: { level: 'warn' }, // as `keyturn serve` with LOG_LEVEL=warn (the benchmark's setting)
    ...(memoryCounters === undefined
      ? {}
      : {
          protection: {
            keyPerMinute: 10_000_000, // as bench/servers.mjs: the limiter runs, refuses nothing
            ipPerMinute: 600,
            guessLimit: 20,
            guessBlockSeconds: 600,
            counters: memoryCounters(),
          },
        }),
  })
  await app.ready()
  await services.apiKeys.bootstrapAdmin(adminKey)
  const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
  const created = await app.inject({
    method: 'POST',
    url: '/api/v0/products',
    headers,
    payload: { name: 'AB' },
  })
  const product = created.json()
  const seeder = licenseSeeder(database, product.id, Date.now())
  await seeder.grow(licenses)
  const pools = seeder.pools()
  const request =
    scenario === 'retrieve'
      ? () => ({ method: 'GET', url: `/api/v0/licenses/${pick(pools.ids)}`, headers })
      : () => ({
          method: 'POST',
          url: '/api/v0/licenses/validate',
          headers,
          payload: JSON.stringify({ key: pick(pools.keys), productId: product.id }),
        })
  process.on('message', async (message) => {
    if (message.kind === 'ready') {
      process.send({ ok: true })
      return
    }
    const requests = Array.from({ length: message.size }, request)
    const before = process.cpuUsage()
    for (const one of requests) {
      const response = await app.inject(one)
      if (response.statusCode !== 200) {
        throw new Error(`${response.statusCode}: ${response.body}`)
      }
    }
    const used = process.cpuUsage(before)
    process.send({ cpuUs: (used.user + used.system) / message.size })
  })
}

function pick(items) {
  return items[Math.floor(Math.random() * items.length)]
}
