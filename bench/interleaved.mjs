#!/usr/bin/env node
/**
 * Interleaved comparison of HTTP scenarios on ONE running `keyturn serve`, for a busy machine:
 * `npm run bench` measures each scenario once, minutes apart, so a change in the machine's load
 * between them reads as a difference. Here the scenarios take turns in short rounds against the
 * same server (e.g. validate, validate-signed, validate, validate-signed, …) and each round records
 * the server's requests per second and its CPU per response: for the whole process (every thread)
 * and for its main thread alone (the event loop, what bounds one process's throughput). The
 * summary gives each scenario's median over the rounds and the ratios to the first scenario.
 *
 *   node bench/interleaved.mjs --only=validate,validate-signed [--engines=sqlite] [--licenses=20000]
 *        [--rounds=8] [--seconds=3] [--connections=50] [--workers=1,2]
 *
 * `--workers=1,2` starts one server per setting on the same database (`keyturn serve`, then
 * `keyturn serve --workers 2`) and the rounds take turns between them too; CPU then sums the
 * server's processes (and their main threads).
 *
 * Data: seeded like `npm run bench` (bench/seed.mjs). Load: autocannon in this process (the server
 * is its own process). Prints Markdown.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { onCleanup, runMain } from './cleanup.mjs'
import { apiOk } from './net.mjs'
import { requirePostgres } from './postgres.mjs'
import { interleavedRounds, measureRound, median } from './rounds.mjs'
import { scenarios } from './scenarios.mjs'
import { createDatabase, licenseSeeder } from './seed.mjs'
import { processTree, startKeyturn, waitUntilIdle } from './servers.mjs'

const here = import.meta.dirname

function parseOptions(argv) {
  const options = {
    engine: 'sqlite',
    only: ['validate', 'validate-signed'],
    licenses: 20_000,
    rounds: 8,
    seconds: 3,
    connections: 50,
    workers: undefined,
  }
  for (const arg of argv) {
    const [name, value] = arg.replace(/^--/, '').split('=')
    if (name === 'engines') {
      options.engine = value
    } else if (name === 'only') {
      options.only = value.split(',')
    } else if (name === 'workers') {
      options.workers = value.split(',').map(Number)
    } else if (['licenses', 'rounds', 'seconds', 'connections'].includes(name)) {
      options[name] = Number(value)
    } else {
      throw new Error(`unknown option ${arg}`)
    }
  }
  for (const id of options.only) {
    if (!scenarios.some((scenario) => scenario.id === id)) {
      throw new Error(`no scenario ${id}`)
    }
  }
  return options
}

async function round(server, load, options, adminKey) {
  const undo = await load.setUp?.() // e.g. the -no-events scenarios' trigger (bench/events.mjs)
  try {
    return await measureRound({
      url: server.url,
      pids: () => processTree(server.pid),
      load,
      connections: options.connections,
      seconds: options.seconds,
      adminKey,
      timeout: 120, // seconds: a metadata lookup on SQLite at 1M takes seconds
    })
  } finally {
    await undo?.()
  }
}

async function main() {
  const options = parseOptions(process.argv.slice(2))
  process.chdir(resolve(here, '..'))
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-interleaved-'))
  onCleanup('work folder', () => rmSync(dir, { recursive: true, force: true }))
  const postgresUrl = options.engine === 'postgres' ? await requirePostgres() : undefined
  const now = Date.now()
  const credentials = {
    adminKey: `kt_admin_bench${randomBytes(24).toString('base64url')}`,
    secret: randomBytes(32).toString('base64url'),
  }
  const database = await createDatabase(options.engine, 'keyturn_interleaved', { dir, postgresUrl })
  onCleanup('database', () => {}, database.drop)
  const start = (workers) => startKeyturn({ databaseUrl: database.url, ...credentials, workers })
  const creator = await start(undefined)
  const product = await apiOk(
    creator.url,
    credentials.adminKey,
    'POST',
    '/api/v0/products',
    { name: 'AB' },
    201,
  )
  await creator.stop()
  const seeder = licenseSeeder(database, product.id, now)
  await seeder.grow(options.licenses)
  const pools = seeder.pools()
  const loads = []
  for (const workers of options.workers ?? [1]) {
    const server = await start(workers === 1 ? undefined : workers)
    onCleanup('server', () => server.stop())
    for (const id of options.only) {
      const scenario = scenarios.find((s) => s.id === id)
      const load = await scenario.prepare({
        url: server.url,
        adminKey: credentials.adminKey,
        productId: product.id,
        pools,
        now,
        database: database.location,
      })
      const name =
        options.workers === undefined
          ? id
          : `${id}, ${workers === 1 ? 'one process' : `--workers ${workers}`}`
      loads.push({ name, load, server })
    }
  }
  const loadStart = loadavg()
  const rows = await interleavedRounds(loads, {
    rounds: options.rounds,
    seconds: options.seconds,
    measure: ({ server, load }, seconds) =>
      round(server, load, { ...options, seconds }, credentials.adminKey),
    idle: ({ server }) => waitUntilIdle(server.url, server.pid),
  })
  const loadEnd = loadavg()
  const summary = [...rows].map(([id, measured]) => ({
    id,
    rps: median(measured.map((m) => m.rps)),
    processUs: median(measured.map((m) => m.processUs)),
    mainUs: median(measured.map((m) => m.mainUs)),
    p50: median(measured.map((m) => m.p50)),
    p99: median(measured.map((m) => m.p99)),
  }))
  const first = summary[0]
  console.log(
    `Interleaved: ${options.engine}, ${options.licenses} licenses, ${options.rounds} rounds of ${options.seconds} s each, ` +
      `${options.connections} connections; ` +
      `load average ${loadStart[0].toFixed(1)} → ${loadEnd[0].toFixed(1)}. Medians over the rounds.\n`,
  )
  console.log(
    '| scenario | req/s | p50 ms | p99 ms | CPU µs/req (process) | CPU µs/req (main thread) | req/s vs first | process CPU: first / this | main thread: first / this |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const row of summary) {
    console.log(
      `| ${row.id} | ${row.rps.toFixed(row.rps < 10 ? 2 : 0)} | ${row.p50.toFixed(1)} | ${row.p99.toFixed(1)} | ${row.processUs.toFixed(0)} | ${row.mainUs.toFixed(0)} | ` +
        `${((100 * row.rps) / first.rps).toFixed(0)}% | ${((100 * first.processUs) / row.processUs).toFixed(0)}% | ` +
        `${((100 * first.mainUs) / row.mainUs).toFixed(0)}% |`,
    )
  }
  console.log(
    `\nPer round (req/s, process µs, main µs): ${[...rows]
      .map(
        ([id, measured]) =>
          `${id}: ${measured.map((m) => `${m.rps.toFixed(0)}/${m.processUs.toFixed(0)}/${m.mainUs.toFixed(0)}`).join(' ')}`,
      )
      .join('; ')}`,
  )
}

await runMain(main)
