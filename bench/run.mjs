#!/usr/bin/env node
/**
 * `npm run bench`: measures Keyturn against ceilings measured in the same run. See
 * bench/README.md. Options:
 *   --quick            under a minute: small data, short runs; checks the harness, judges no target
 *   --profile          one scenario (first of --only, default validate) on one engine (first of
 *                      --engines, default sqlite) with the server under --cpu-prof; summarises it
 *   --engines=a,b      sqlite and/or postgres (default: both)
 *   --only=a,b         only these HTTP scenarios (ids in bench/scenarios.mjs), e.g. --only=validate
 *   --workers=n        `keyturn serve --workers n` (node:cluster); results go to results/workers-<n>.*
 *   --seconds=n        measured seconds per HTTP scenario (with --quick: small data, longer runs)
 *   --env=NAME=value   starts keyturn serve with this KEYTURN_* setting (repeatable), to compare a
 *                      setting; results then go to results/env.* (latest.* stays the reference)
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { cleanupAll, installExitHandlers, onCleanup } from './cleanup.mjs'
import { measureExpiryNotices } from './expiry-notices.mjs'
import { runLoad } from './load.mjs'
import { apiOk } from './net.mjs'
import { startPostgres } from './postgres.mjs'
import { profileMarkdown, summariseProfile } from './profile.mjs'
import { count, evaluate, pairedRatios, tableRows, textTable, writeReport } from './report.mjs'
import { median } from './rounds.mjs'
import { scenarios } from './scenarios.mjs'
import { createDatabase, licenseSeeder } from './seed.mjs'
import { startBareFastify, startKeyturn, startLookupFastify, waitUntilIdle } from './servers.mjs'
import { findWrk, runWrk } from './wrk.mjs'

const here = import.meta.dirname
const resultsDir = join(here, 'results')

function parseOptions(argv) {
  const options = {
    quick: false,
    profile: false,
    engines: ['sqlite', 'postgres'],
    only: undefined,
    workers: undefined,
    seconds: undefined,
    env: {},
  }
  for (const arg of argv) {
    if (arg === '--quick') {
      options.quick = true
    } else if (arg === '--profile') {
      options.profile = true
    } else if (arg.startsWith('--engines=')) {
      options.engines = arg.slice('--engines='.length).split(',')
      if (options.engines.some((engine) => engine !== 'sqlite' && engine !== 'postgres')) {
        throw new Error(`--engines takes sqlite and/or postgres, not ${arg}`)
      }
    } else if (arg.startsWith('--only=')) {
      options.only = arg.slice('--only='.length).split(',')
      const unknown = options.only.filter((id) => !scenarios.some((scenario) => scenario.id === id))
      if (unknown.length > 0) {
        throw new Error(
          `--only: no scenario ${unknown.join(', ')} (${scenarios.map((s) => s.id).join(', ')})`,
        )
      }
    } else if (arg.startsWith('--workers=')) {
      options.workers = Number(arg.slice('--workers='.length))
      if (!Number.isInteger(options.workers) || options.workers < 1 || options.workers > 64) {
        throw new Error(`--workers takes a whole number from 1 to 64, not ${arg}`)
      }
    } else if (arg.startsWith('--env=')) {
      const match = /^--env=(KEYTURN_[A-Z0-9_]+)=(.*)$/s.exec(arg)
      if (match === null) {
        throw new Error(`--env takes KEYTURN_NAME=value, not ${arg}`)
      }
      options.env[match[1]] = match[2]
    } else if (arg.startsWith('--seconds=')) {
      options.seconds = Number(arg.slice('--seconds='.length))
      if (!(options.seconds > 0 && options.seconds <= 600)) {
        throw new Error(`--seconds takes a number of seconds up to 600, not ${arg}`)
      }
    } else {
      throw new Error(
        `unknown option ${arg} (options: --quick, --profile, --engines=sqlite,postgres, --only=validate,…, --workers=2, --seconds=10, --env=KEYTURN_X=1)`,
      )
    }
  }
  return options
}

function settingsFor(options) {
  const settings = presetFor(options)
  return options.seconds === undefined ? settings : { ...settings, durationSeconds: options.seconds }
}

function presetFor(options) {
  return options.quick
    ? {
        connections: 50,
        warmupSeconds: 0.3,
        durationSeconds: 1,
        inProcessSeconds: 0.3,
        licenses: { small: 10_000, large: 20_000 },
        deliveries: 1_000,
      }
    : {
        connections: 50,
        warmupSeconds: 3,
        durationSeconds: 10,
        inProcessSeconds: 3,
        licenses: { small: 10_000, large: 1_000_000 },
        deliveries: 5_000,
      }
}

function log(line) {
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`)
}

/** Runs bench/in-process.mjs with `spec`; resolves to its JSON answer. Bounded. */
function measureInProcess(spec, workDir) {
  const specFile = join(workDir, `in-process-${spec.kind}.json`)
  writeFileSync(specFile, JSON.stringify(spec))
  const child = spawn(process.execPath, [join(here, 'in-process.mjs'), specFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const stop = onCleanup('in-process measurement', () => child.exitCode === null && child.kill('SIGKILL'))
  const timer = setTimeout(() => child.kill('SIGKILL'), 300_000)
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk
  })
  return new Promise((resolveRun, rejectRun) => {
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      void stop()
      if (code === 0) {
        resolveRun(JSON.parse(stdout))
      } else {
        rejectRun(new Error(`in-process ${spec.kind} measurement exited (${signal ?? code}):\n${stderr}`))
      }
    })
  })
}

/** A ceiling server (started by `start`) under `load` for one run, then stopped. */
async function measureCeilingServer(start, load, settings, workDir) {
  const server = await start()
  try {
    return await runLoad(server, load, settings, workDir)
  } finally {
    await server.stop()
  }
}

/** The HTTP ceiling: the bare-Fastify process under the same load as the scenarios. */
function measureBareFastify(settings, workDir) {
  const load = { method: 'GET', requests: [{ path: '/hello' }], idlePath: '/hello' }
  return measureCeilingServer(startBareFastify, load, settings, workDir)
}

/**
 * The one-lookup ceiling on an engine: bench/lookup-fastify.mjs under validate's own load (the
 * validate scenario's keys, path and body), so validate can be read against the least work a
 * per-request read costs.
 */
async function measureLookupFastify(location, pools, productId, settings, workDir) {
  const validate = scenarios.find((scenario) => scenario.id === 'validate')
  const { method, requests } = await validate.prepare({ productId, pools })
  return measureCeilingServer(
    () => startLookupFastify(location),
    { method, requests, idlePath: '/readyz' },
    settings,
    workDir,
  )
}

/** Creates the benchmark's product through the API (so its signing key is real). */
async function createProduct(database, credentials) {
  const server = await startKeyturn({ databaseUrl: database.url, ...credentials })
  try {
    const product = await apiOk(
      server.url,
      credentials.adminKey,
      'POST',
      '/api/v0/products',
      {
        name: 'Benchmark product',
      },
      201,
    )
    return product
  } finally {
    await server.stop()
  }
}

/** A migrated database with the benchmark's product (made through the API) and its seeder. */
async function preparedDatabase(engine, context) {
  const database = await createDatabase(engine, 'keyturn_bench', context)
  const dropDatabase = onCleanup(`${engine} database`, () => {}, database.drop)
  const product = await createProduct(database, context.credentials)
  return { database, product, seeder: licenseSeeder(database, product.id, context.now), dropDatabase }
}

/** Grows the database to `licenses` licenses; the seeding time recorded is the total so far. */
async function seedTo(prepared, engine, licenses, context) {
  const seeding = context.results.seeding
  const before = seeding.filter((seed) => seed.engine === engine).at(-1)
  log(`seeding ${engine} to ${count(licenses)} licenses`)
  const seconds = (before?.seconds ?? 0) + (await prepared.seeder.grow(licenses - (before?.licenses ?? 0)))
  seeding.push({ engine, licenses, seconds })
  log(`${count(licenses)} licenses on ${engine} seeded in ${seconds.toFixed(1)} s in all`)
  return prepared.seeder.pools()
}

/** `keyturn serve` on a database, restartable (when a run leaves it with a backlog it cannot clear). */
async function keyturnInstance(database, context, nodeFlags = []) {
  const start = () =>
    startKeyturn({
      databaseUrl: database.url,
      ...context.credentials,
      nodeFlags,
      workers: context.options.workers,
      env: context.options.env,
    })
  const instance = {
    server: await start(),
    async restart() {
      await instance.server.stop()
      instance.server = await start()
    },
    stop: () => instance.server.stop(),
  }
  return instance
}

async function runScenario(instance, scenario, base, context) {
  const { settings, results, credentials } = context
  const row = {
    engine: base.engine,
    size: base.size,
    licenses: base.licenses,
    id: scenario.id,
    title: scenario.title,
    ceiling: scenario.ceiling,
  }
  const load = await scenario.prepare({
    url: instance.server.url,
    adminKey: credentials.adminKey,
    productId: base.productId,
    pools: base.pools,
    now: context.now,
    database: base.database,
    deliveries: settings.deliveries,
  })
  if (load.measure !== undefined) {
    log(`${scenario.id} on ${base.engine}`)
    const measured = await load.measure()
    if (measured.unavailable !== undefined) {
      results.scenarios.push({ ...row, unavailable: 'not available', note: measured.unavailable })
    } else {
      results.scenarios.push({ ...row, ...measured })
      log(`  ${measured.rps?.toFixed(0)} per second${measured.problem ? `; ${measured.problem}` : ''}`)
    }
    return
  }
  if (load.unavailable !== undefined) {
    log(`${scenario.id} on ${base.engine}: not available: ${load.unavailable}`)
    results.scenarios.push({ ...row, unavailable: 'not available', note: load.unavailable })
    return
  }
  log(`${scenario.id} on ${base.engine} (${count(base.licenses)} licenses)`)
  const loadSettings =
    load.connections === undefined ? settings : { ...settings, connections: load.connections }
  const measured = await runLoadOf(instance, load, loadSettings, context)
  const unexpected = measured.non2xx + measured.errors
  const problems = [
    ...(unexpected > 0
      ? [
          `unexpected answers: ${JSON.stringify({ statusCodes: measured.statusCodes, errors: measured.errors, timeouts: measured.timeouts })}`,
        ]
      : []),
    ...(measured.requests === 0 ? ['no response completed in the measured time'] : []),
  ]
  results.scenarios.push({
    ...row,
    ...(load.note === undefined ? {} : { note: load.note }),
    ...measured,
    ...(problems.length > 0 ? { problem: problems.join('; ') } : {}),
  })
  log(
    `  ${measured.rps.toFixed(0)} req/s, p50 ${measured.latency.p50?.toFixed(2)} ms, p99 ${measured.latency.p99?.toFixed(2)} ms, ` +
      `RSS peak ${measured.rss.peak?.toFixed(0)} MB${problems.length > 0 ? `; ${problems.join('; ')}` : ''}`,
  )
  if (!measured.isIdleAfter) {
    log('  the server is still busy with that run 20 s later: restarting it')
    results.scenarios.at(-1).restartedAfter = true
    await instance.restart()
  } else if (load.restartAfter === true) {
    await instance.restart()
  }
  return problems.length === 0 ? load : undefined
}

/** One autocannon run of a scenario's prepared `load`, inside its setUp and what that returns. */
async function runLoadOf(instance, load, settings, context) {
  const undo = await load.setUp?.()
  try {
    return await runLoad(
      instance.server,
      {
        method: load.method,
        apiKey: context.credentials.adminKey,
        headers: load.headers,
        requests: load.requests,
        idlePath: '/readyz',
      },
      settings,
      context.workDir,
    )
  } finally {
    await undo?.()
  }
}

/** Paired rounds per pair: enough for a median, short enough to keep the run's length. */
const pairedRounds = { quick: 2, full: 6 }

/**
 * The ratios that judge one scenario against another (report.mjs `pairedRatios`: a write
 * with its event vs the same write with the event rows dropped, a signed answer vs unsigned,
 * retrieve vs validate), measured again in short alternating rounds on the same server
 * after both full runs. One pass of each, one after the other, moved these ratios by ±10% between
 * runs (bench/history.md; signed answers on PostgreSQL: 68% in one full run,
 * 86% interleaved), as much as the effects judged. Each round runs the two in turn (the
 * order alternating), and the ratio is the median of the rounds' ratios, so a change in the
 * machine's load hits both sides.
 */
async function measurePairs(instance, loads, base, context) {
  const { settings, results } = context
  const rounds = context.options.quick ? pairedRounds.quick : pairedRounds.full
  const short = {
    ...settings,
    warmupSeconds: Math.min(1, settings.warmupSeconds),
    durationSeconds: Math.max(1, settings.durationSeconds / 3),
  }
  for (const pair of pairedRatios) {
    const of = loads.get(pair.of)
    const over = loads.get(pair.over)
    if (of === undefined || over === undefined) {
      continue
    }
    log(`${pair.of} vs ${pair.over} on ${base.engine}: ${rounds} paired rounds`)
    const ratios = []
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [of, over] : [over, of]
      const rates = new Map()
      for (const load of order) {
        const measured = await runLoadOf(instance, load, short, context)
        rates.set(load, measured.non2xx + measured.errors === 0 ? measured.rps : undefined)
      }
      const rateOf = rates.get(of)
      const rateOver = rates.get(over)
      if (rateOf !== undefined && rateOver !== undefined && rateOver > 0) {
        ratios.push(rateOf / rateOver)
      }
    }
    if (ratios.length > 0) {
      const ratio = median(ratios)
      results.paired.push({ engine: base.engine, id: pair.id, ratio, rounds: ratios })
      log(
        `  median ${(ratio * 100).toFixed(0)}% (${ratios.map((r) => `${(r * 100).toFixed(0)}%`).join(', ')})`,
      )
    }
  }
}

/** Offered load of the open-loop run: this share of validate's closed-loop rate in the same run. */
const openLoopShare = 0.7

/**
 * Validate's tail at a fixed offered rate (autocannon's overallRate at 70% of the rate the
 * closed-loop run reached): a closed loop slows its clients down when the server stalls, so its p99
 * under-reports a stall; an open loop keeps sending, and a stall shows as queued requests.
 */
async function measureOpenLoop(instance, load, row, context) {
  const offered = Math.max(1, Math.round(row.rps * openLoopShare))
  log(`validate on ${row.engine} at a fixed ${offered} requests per second`)
  const measured = await runLoadOf(instance, load, { ...context.settings, overallRate: offered }, context)
  context.results.scenarios.push({
    engine: row.engine,
    size: row.size,
    licenses: row.licenses,
    id: 'validate-open-loop',
    title: `validate by key, open loop at ${Math.round(openLoopShare * 100)}% of its closed-loop rate`,
    ceiling: 'none',
    offeredRate: offered,
    ...measured,
    ...(measured.non2xx + measured.errors > 0
      ? { problem: `unexpected answers: ${JSON.stringify(measured.statusCodes)}` }
      : {}),
  })
  log(`  p50 ${measured.latency.p50?.toFixed(2)} ms, p99 ${measured.latency.p99?.toFixed(2)} ms`)
}

/** Rounds of the second load generator per engine: each round runs the one-lookup route and validate. */
const wrkRounds = { quick: 1, full: 3 }

/**
 * The second load generator (bench/wrk.mjs): validate and the one-lookup route under wrk, in
 * alternating rounds (the order swapping each round), so the ratio and the tails can be read
 * against autocannon's. Skipped with the reason when wrk is not installed.
 */
async function measureWithWrk(instance, load, base, context) {
  const { results, settings } = context
  const wrk = findWrk()
  if (wrk === undefined) {
    results.wrk.push({ engine: base.engine, unavailable: 'wrk is not installed (Debian package wrk)' })
    log(`wrk on ${base.engine}: not installed, skipped`)
    return
  }
  const rounds = context.options.quick ? wrkRounds.quick : wrkRounds.full
  const short = {
    ...settings,
    warmupSeconds: Math.min(2, settings.warmupSeconds),
    durationSeconds: Math.max(2, settings.durationSeconds / 2),
  }
  log(`validate vs one lookup on ${base.engine} under wrk: ${rounds} rounds`)
  const lookup = await startLookupFastify(base.database)
  const runs = { validate: [], lookup: [] }
  try {
    for (let round = 0; round < rounds; round++) {
      for (const which of round % 2 === 0 ? ['lookup', 'validate'] : ['validate', 'lookup']) {
        const server = which === 'lookup' ? lookup : instance.server
        const measured = await runWrk(
          wrk,
          server,
          {
            method: load.method,
            apiKey: which === 'lookup' ? undefined : context.credentials.adminKey,
            headers: load.headers,
            requests: load.requests,
          },
          short,
          context.workDir,
        )
        runs[which].push(measured)
        await waitUntilIdle(`${server.url}/readyz`, server.pid)
      }
    }
  } finally {
    await lookup.stop()
  }
  const summary = (list) => ({
    rps: median(list.map((run) => run.rps)),
    p50: median(list.map((run) => run.latency.p50)),
    p99: median(list.map((run) => run.latency.p99)),
    worstP99: Math.max(...list.map((run) => run.latency.p99)),
    cpuPerRequest: median(list.map((run) => run.serverCpu.microsecondsPerRequest)),
    unexpected: list.reduce((sum, run) => sum + run.non2xx + run.errors, 0),
  })
  const ratios = runs.validate.map((run, round) => run.rps / runs.lookup[round].rps)
  const entry = {
    engine: base.engine,
    licenses: base.licenses,
    rounds,
    ratio: median(ratios),
    ratios,
    validate: summary(runs.validate),
    lookup: summary(runs.lookup),
  }
  results.wrk.push(entry)
  log(
    `  validate ${entry.validate.rps.toFixed(0)} req/s (p99 ${entry.validate.p99.toFixed(2)} ms), ` +
      `one lookup ${entry.lookup.rps.toFixed(0)} req/s (p99 ${entry.lookup.p99.toFixed(2)} ms): ${(entry.ratio * 100).toFixed(0)}%`,
  )
}

/** Every scenario runs on the large data; validate also on the small (the cost must not grow). */
function scenariosFor(size, options) {
  return scenarios.filter(
    (scenario) =>
      (size === 'large' || scenario.id === 'validate') &&
      (options.only === undefined || options.only.includes(scenario.id)),
  )
}

/** Everything on one engine: both data sizes, the raw database ceilings, and (once) the crypto ones. */
async function runEngine(engine, context) {
  const { settings, results } = context
  const prepared = await preparedDatabase(engine, context)
  for (const size of ['small', 'large']) {
    const licenses = settings.licenses[size]
    const pools = await seedTo(prepared, engine, licenses, context)
    const base = {
      engine,
      size,
      licenses,
      productId: prepared.product.id,
      pools,
      database: prepared.database.location,
    }
    if (size === 'large') {
      log(`raw ${engine} ceilings`)
      results.ceilings[engine] = await measureInProcess(
        {
          kind: engine,
          seconds: settings.inProcessSeconds,
          path: prepared.database.location.path,
          url: prepared.database.location.url,
          keys: pools.keys,
          productId: prepared.product.id,
        },
        context.workDir,
      )
      if (scenariosFor(size, context.options).some((scenario) => scenario.id === 'validate')) {
        log(`ceiling: Fastify + one lookup on ${engine}`)
        results.ceilings[engine].lookupHttp = await measureLookupFastify(
          prepared.database.location,
          pools,
          prepared.product.id,
          settings,
          context.workDir,
        )
      }
    }
    if (size === 'large') {
      log(`expiry-notice job on ${engine} (${licenses} licenses)`)
      const notices = await measureExpiryNotices(prepared.database.location)
      results.jobs.push({ engine, licenses, job: 'expiry-notices', ...notices })
      log(
        `  first run ${notices.first.ms} ms (${notices.first.rowsRead} rows read); a day later ${notices.day.ms} ms (${notices.day.rowsRead} rows, ${notices.day.events} events); idle ${notices.idle.ms} ms (${notices.idle.rowsRead} rows)`,
      )
    }
    const instance = await keyturnInstance(prepared.database, context)
    let token
    let licenseFile
    let guard
    try {
      const loads = new Map()
      for (const scenario of scenariosFor(size, context.options)) {
        const load = await runScenario(instance, scenario, base, context)
        if (load?.requests !== undefined && pairedRatios.some((p) => [p.of, p.over].includes(scenario.id))) {
          loads.set(scenario.id, load)
        }
        if (scenario.id === 'validate' && size === 'large' && load?.requests !== undefined) {
          await measureOpenLoop(instance, load, context.results.scenarios.at(-1), context)
          await measureWithWrk(instance, load, base, context)
        }
      }
      await measurePairs(instance, loads, base, context)
      if (size === 'large' && results.ceilings.crypto === undefined) {
        token = await apiOk(
          instance.server.url,
          context.credentials.adminKey,
          'POST',
          `/api/v0/licenses/${pools.activeIds[0]}/tokens`,
          {},
          201,
        )
        licenseFile = await apiOk(
          instance.server.url,
          context.credentials.adminKey,
          'POST',
          `/api/v0/licenses/${pools.activeIds[0]}/license-file`,
          {},
          201,
        )
        guard = await signedValidation(instance.server.url, context.credentials.adminKey, pools.activeIds[0])
      }
    } finally {
      await instance.stop()
    }
    if (token !== undefined) {
      log('jose, node:crypto and validateLicenseToken in-process')
      const crypto = await measureInProcess(
        {
          kind: 'crypto',
          seconds: settings.inProcessSeconds,
          token: token.token,
          licenseFile: licenseFile.licenseFile,
          publicKey: prepared.product.publicKey,
          productId: prepared.product.id,
          guard,
        },
        context.workDir,
      )
      results.ceilings.crypto = {
        joseSign: crypto.joseSign,
        joseVerify: crypto.joseVerify,
        nodeVerify: crypto.nodeVerify,
      }
      results.scenarios.push({
        engine: 'in-process',
        id: 'client-validate',
        title: '@keyturn/client validateLicenseToken',
        ceiling: 'nodeVerify',
        rps: crypto.clientValidate.opsPerSecond,
        latency: { p50: crypto.clientValidate.p50, p99: crypto.clientValidate.p99 },
      })
      results.scenarios.push({
        engine: 'in-process',
        id: 'client-verify-file',
        title: '@keyturn/client verifyLicenseFile',
        ceiling: 'nodeVerify',
        rps: crypto.clientVerifyFile.opsPerSecond,
        latency: { p50: crypto.clientVerifyFile.p50, p99: crypto.clientVerifyFile.p99 },
      })
      if (crypto.guardCheck !== undefined) {
        results.scenarios.push({
          engine: 'in-process',
          id: 'guard-offline-check',
          title: '@keyturn/client license guard check(), offline',
          ceiling: 'nodeVerify',
          rps: crypto.guardCheck.opsPerSecond,
          latency: { p50: crypto.guardCheck.p50, p99: crypto.guardCheck.p99 },
        })
      }
    }
  }
  await prepared.dropDatabase()
}

/** A signed validation answer of the license `id`, as the license guard keeps it (its proof). */
async function signedValidation(baseUrl, adminKey, id) {
  const { KeyturnClient } = await import('../packages/client/dist/client/src/index.js')
  const keyturn = new KeyturnClient({ baseUrl, apiKey: adminKey })
  const license = await keyturn.getLicense(id)
  const product = await keyturn.getProduct(license.productId)
  const { proof } = await keyturn.validateLicenseWithProof(
    { key: license.key, productId: license.productId },
    { publicKey: product.publicKey },
  )
  return { proof, licenseKey: license.key }
}

function skippedEngine(engine, reason, context) {
  for (const size of ['small', 'large']) {
    for (const scenario of scenariosFor(size, context.options)) {
      context.results.scenarios.push({
        engine,
        size,
        licenses: context.settings.licenses[size],
        id: scenario.id,
        title: scenario.title,
        ceiling: scenario.ceiling,
        skipped: reason,
        note: reason,
      })
    }
  }
}

async function benchmark(options) {
  const settings = settingsFor(options)
  const workDir = mkdtempSync(join(tmpdir(), 'keyturn-bench-'))
  onCleanup('work folder', () => rmSync(workDir, { recursive: true, force: true }))
  const results = {
    mode: options.quick ? 'quick' : 'full',
    startedAt: new Date().toISOString(),
    finishedAt: undefined,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      node: process.version,
      loadAverage: { start: loadavg(), end: undefined },
    },
    settings,
    workers: options.workers ?? 1,
    env: options.env,
    engines: options.engines,
    postgres: {},
    seeding: [],
    ceilings: {},
    scenarios: [],
    paired: [],
    /** Validate and the one-lookup route under the second load generator, per engine (bench/wrk.mjs). */
    wrk: [],
    /** Background jobs measured at the large size (bench/expiry-notices.mjs). */
    jobs: [],
  }
  const context = {
    options,
    settings,
    results,
    workDir,
    dir: workDir,
    now: Date.now(),
    credentials: {
      adminKey: `kt_admin_bench${randomBytes(24).toString('base64url')}`,
      secret: randomBytes(32).toString('base64url'),
    },
  }

  log('ceiling: bare Fastify')
  const httpRuns = [await measureBareFastify(settings, workDir)]
  for (const engine of options.engines) {
    if (engine === 'postgres') {
      const postgres = await startPostgres()
      if (postgres.skip !== undefined) {
        log(`PostgreSQL skipped: ${postgres.skip}`)
        results.postgres = { skipped: postgres.skip }
        skippedEngine(engine, `skipped: ${postgres.skip}`, context)
        continue
      }
      results.postgres = { version: postgres.version }
      try {
        await runEngine(engine, { ...context, postgresUrl: postgres.url })
      } finally {
        await postgres.stop()
      }
    } else {
      await runEngine(engine, context)
    }
  }
  if (!options.quick) {
    log('ceiling: bare Fastify, again (the machine may have drifted)')
    httpRuns.push(await measureBareFastify(settings, workDir))
  }
  results.ceilings.http = {
    runs: httpRuns,
    rps: httpRuns.reduce((sum, run) => sum + run.rps, 0) / httpRuns.length,
    cpuPerRequest:
      httpRuns.reduce((sum, run) => sum + (run.serverCpu?.microsecondsPerRequest ?? Number.NaN), 0) /
      httpRuns.length,
    latency: httpRuns[0]?.latency,
    rss: httpRuns[0]?.rss,
  }
  results.machine.loadAverage.end = loadavg()
  results.finishedAt = new Date().toISOString()

  const evaluated = evaluate(results)
  const lines = tableRows(results, evaluated)
  const report = { ...results, scenarios: evaluated.rows, derived: evaluated.derived }
  console.log(textTable(lines))
  // A run with --workers is a comparison, not the reference table: it keeps latest.* as it is.
  const name = options.quick
    ? 'quick'
    : options.workers !== undefined
      ? `workers-${options.workers}`
      : Object.keys(options.env).length > 0
        ? 'env'
        : 'latest'
  writeReport(report, join(resultsDir, `${name}.json`), join(resultsDir, `${name}.md`), lines)
  log(`written: bench/results/${name}.json and bench/results/${name}.md`)
  const broken = evaluated.rows.filter((row) => row.problem !== undefined)
  if (broken.length > 0) {
    console.error(`\n${broken.length} scenario(s) got unexpected answers:`)
    for (const row of broken) {
      console.error(`  ${row.title} on ${row.engine}: ${row.problem}`)
    }
    return 1
  }
  return 0
}

/**
 * One scenario (the first of --only, default validate) on one engine (the first of --engines,
 * default sqlite) with the server under --cpu-prof, summarised. --quick profiles on 20k licenses.
 */
async function profileScenario(options) {
  // --quick picks the small data only: a profile needs the full warm-up and measured time.
  const settings = { ...settingsFor(options), warmupSeconds: 3, durationSeconds: 10 }
  const engine = options.engines[0]
  const scenario = scenarios.find((s) => s.id === (options.only?.[0] ?? 'validate'))
  const workDir = mkdtempSync(join(tmpdir(), 'keyturn-bench-'))
  onCleanup('work folder', () => rmSync(workDir, { recursive: true, force: true }))
  const context = {
    options,
    settings,
    workDir,
    dir: workDir,
    now: Date.now(),
    results: { seeding: [], scenarios: [], paired: [], wrk: [] },
    credentials: {
      adminKey: `kt_admin_bench${randomBytes(24).toString('base64url')}`,
      secret: randomBytes(32).toString('base64url'),
    },
  }
  let postgres
  if (engine === 'postgres') {
    postgres = await startPostgres()
    if (postgres.skip !== undefined) {
      throw new Error(`PostgreSQL unavailable: ${postgres.skip}`)
    }
    context.postgresUrl = postgres.url
  }
  try {
    const licenses = settings.licenses.large
    const prepared = await preparedDatabase(engine, context)
    const pools = await seedTo(prepared, engine, licenses, context)
    const profileDir = join(resultsDir, 'profiles')
    rmSync(profileDir, { recursive: true, force: true })
    mkdirSync(profileDir, { recursive: true })
    const instance = await keyturnInstance(prepared.database, context, [
      '--cpu-prof',
      `--cpu-prof-dir=${profileDir}`,
    ])
    try {
      await runScenario(
        instance,
        scenario,
        {
          engine,
          size: 'large',
          licenses,
          productId: prepared.product.id,
          pools,
          database: prepared.database.location,
        },
        context,
      )
    } finally {
      await instance.stop() // the profile is written when the process exits
    }
    await prepared.dropDatabase()
    // `keyturn serve` replaces itself to add its heap flags (packages/cli/src/main.ts): the image
    // before that writes a profile of its start-up too. The server's is the last (names start
    // with the time they were written).
    const file = readdirSync(profileDir)
      .filter((name) => name.endsWith('.cpuprofile'))
      .sort()
      .at(-1)
    if (file === undefined) {
      throw new Error('the server wrote no .cpuprofile')
    }
    const measured = context.results.scenarios[0]
    const title =
      `Profile: ${scenario.title}, ${engine}, ${count(licenses)} licenses ` +
      `(${measured.rps.toFixed(0)} req/s, ${measured.serverCpu?.microsecondsPerRequest?.toFixed(0)} CPU µs/req, ` +
      `p99 ${measured.latency.p99?.toFixed(1)} ms, under --cpu-prof; load average ${loadavg()[0].toFixed(1)})`
    const summary = profileMarkdown(summariseProfile(join(profileDir, file), 40), title)
    console.log(summary)
    const name = `profile-${scenario.id}-${engine}${options.quick ? '-quick' : ''}.md`
    writeFileSync(join(resultsDir, name), summary)
    log(`profile: bench/results/profiles/${file}; summary: bench/results/${name}`)
    return 0
  } finally {
    await postgres?.stop()
  }
}

installExitHandlers()
let exitCode = 1
try {
  const options = parseOptions(process.argv.slice(2))
  process.chdir(resolve(here, '..'))
  exitCode = options.profile ? await profileScenario(options) : await benchmark(options)
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error)
} finally {
  await cleanupAll()
}
process.exit(exitCode)
