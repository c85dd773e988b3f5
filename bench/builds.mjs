#!/usr/bin/env node
/**
 * Interleaved comparison of BUILDS (checkouts) of Keyturn on one scenario, for finding what made a
 * request more expensive between two commits (or between a build and a copy with a feature
 * switched off in its dist/). Each checkout must be built (`npx tsc -b`) and have node_modules; it
 * seeds its own database with ITS OWN bench/seed.mjs (schemas differ between commits) to the same
 * number of licenses, and runs its own `keyturn serve` through its own bench/servers.mjs. The bare
 * Fastify ceiling takes turns with them, so every build's ratio to it comes from the same minutes.
 * Rounds alternate (and reverse order every other round); CPU µs per response is the steady figure.
 *
 *   node bench/builds.mjs --builds=/tmp/kt-old,. [--only=validate] [--engines=sqlite]
 *        [--licenses=20000] [--rounds=6] [--seconds=3] [--connections=50]
 *
 * A build given as `dir:ENV=value` starts its server with that extra environment variable (may be
 * repeated: `.:KEYTURN_X=1:KEYTURN_Y=2`), e.g. to compare a setting.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { onCleanup, runMain } from './cleanup.mjs'
import { requirePostgres } from './postgres.mjs'
import { interleavedRounds, measureRound, median } from './rounds.mjs'
import { startBareFastify } from './servers.mjs'

function parseOptions(argv) {
  const options = {
    engine: 'sqlite',
    only: 'validate',
    builds: [],
    licenses: 20_000,
    rounds: 6,
    seconds: 3,
    connections: 50,
  }
  for (const arg of argv) {
    const [name, value] = arg.replace(/^--/, '').split(/=(.*)/s)
    if (name === 'engines') {
      options.engine = value
    } else if (name === 'only') {
      options.only = value
    } else if (name === 'builds') {
      options.builds = value.split(',').map((spec) => {
        const [dir, ...env] = spec.split(':')
        return {
          dir: resolve(dir),
          env: Object.fromEntries(env.map((pair) => pair.split(/=(.*)/s).slice(0, 2))),
        }
      })
    } else if (['licenses', 'rounds', 'seconds', 'connections'].includes(name)) {
      options[name] = Number(value)
    } else {
      throw new Error(`unknown option ${arg}`)
    }
  }
  if (options.builds.length === 0) {
    throw new Error('--builds=<dir>,<dir> is required')
  }
  return options
}

function measureBuildRound(contender, options, seconds) {
  const { server, load, adminKey } = contender
  return measureRound({
    url: server.url,
    pids: () => [server.pid],
    load,
    connections: options.connections,
    seconds,
    adminKey,
  })
}

/** Starts one build's server, on a database seeded by that build's own bench code. */
async function startBuild(build, index, options, dir, postgresUrl) {
  const module = (name) => import(pathToFileURL(join(build.dir, 'bench', name)).href)
  const [{ createDatabase, licenseSeeder }, { startKeyturn, waitUntilIdle }, { scenarios }, { apiOk }] =
    await Promise.all([module('seed.mjs'), module('servers.mjs'), module('scenarios.mjs'), module('net.mjs')])
  const now = Date.now()
  const credentials = {
    adminKey: `kt_admin_bench${randomBytes(24).toString('base64url')}`,
    secret: randomBytes(32).toString('base64url'),
  }
  const database = await createDatabase(options.engine, `keyturn_builds_${index}`, { dir, postgresUrl })
  onCleanup('database', () => {}, database.drop)
  // The build's settings go as `env`: servers.mjs gives a server the caller's environment
  // without its KEYTURN_ variables.
  const start = () => startKeyturn({ databaseUrl: database.url, ...credentials, env: build.env })
  const creator = await start()
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
  // A build with the expiry-notice job: settle it first, or its server's first run (thousands of
  // notices) lands in the measured rounds.
  if (existsSync(join(build.dir, 'packages/server/dist/expiry-notices'))) {
    await (await module('expiry-notices.mjs')).settleExpiryNotices(database.location)
  }
  const server = await start()
  onCleanup('server', () => server.stop())
  const scenario = scenarios.find((s) => s.id === options.only)
  const load = await scenario.prepare({
    url: server.url,
    adminKey: credentials.adminKey,
    productId: product.id,
    pools: seeder.pools(),
    now,
    database: database.location,
  })
  const envText = Object.entries(build.env)
    .map(([name, value]) => ` ${name}=${value}`)
    .join('')
  return {
    name: `${build.dir}${envText}`,
    server,
    load,
    adminKey: credentials.adminKey,
    idle: () => waitUntilIdle(server.url, server.pid),
  }
}

async function main() {
  const options = parseOptions(process.argv.slice(2))
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-builds-'))
  onCleanup('work folder', () => rmSync(dir, { recursive: true, force: true }))
  const postgresUrl = options.engine === 'postgres' ? await requirePostgres() : undefined
  const contenders = []
  for (const [index, build] of options.builds.entries()) {
    contenders.push(await startBuild(build, index, options, dir, postgresUrl))
  }
  const bare = await startBareFastify()
  onCleanup('bare', () => bare.stop())
  contenders.push({
    name: 'bare Fastify (GET /hello)',
    server: bare,
    load: { method: 'GET', requests: [{ path: '/hello' }] },
    idle: () => new Promise((r) => setTimeout(r, 300)),
  })
  const loadStart = loadavg()
  const rows = await interleavedRounds(contenders, {
    rounds: options.rounds,
    seconds: options.seconds,
    measure: (contender, seconds) => measureBuildRound(contender, options, seconds),
    idle: (contender) => contender.idle(),
  })
  const loadEnd = loadavg()
  const summary = [...rows].map(([name, measured]) => ({
    name,
    rps: median(measured.map((m) => m.rps)),
    processUs: median(measured.map((m) => m.processUs)),
    mainUs: median(measured.map((m) => m.mainUs)),
    p99: median(measured.map((m) => m.p99)),
    all: measured,
  }))
  const bareRow = summary.at(-1)
  console.log(
    `Builds: ${options.only}, ${options.engine}, ${options.licenses} licenses, ${options.rounds} rounds of ${options.seconds} s, ` +
      `${options.connections} connections; load average ${loadStart[0].toFixed(1)} → ${loadEnd[0].toFixed(1)}. Medians.\n`,
  )
  // Paired: each round's difference to the first build in the SAME round, then the median, so a
  // change in the machine's load between rounds cancels out.
  const firstRounds = summary[0].all
  const paired = (row) => median(row.all.map((m, index) => m.mainUs - firstRounds[index].mainUs))
  const pairedRatio = (row) => median(row.all.map((m, index) => m.rps / firstRounds[index].rps))
  console.log(
    '| build | req/s | p99 ms | CPU µs/req (process) | CPU µs/req (main) | main µs vs first, paired | req/s vs first, paired | req/s vs bare | bare CPU / this |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const row of summary) {
    console.log(
      `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p99.toFixed(1)} | ${row.processUs.toFixed(0)} | ${row.mainUs.toFixed(0)} | ` +
        `${paired(row) >= 0 ? '+' : ''}${paired(row).toFixed(0)} | ${(100 * pairedRatio(row)).toFixed(0)}% | ` +
        `${((100 * row.rps) / bareRow.rps).toFixed(0)}% | ${((100 * bareRow.mainUs) / row.mainUs).toFixed(0)}% |`,
    )
  }
  console.log(
    `\nPer round (req/s / main µs): ${summary
      .map(
        (row) => `${row.name}: ${row.all.map((m) => `${m.rps.toFixed(0)}/${m.mainUs.toFixed(0)}`).join(' ')}`,
      )
      .join('; ')}`,
  )
}

await runMain(main)
