#!/usr/bin/env node
// Runs every package's *.test.ts in one `node --test` run, so the output ends with one node test
// runner summary. Covers PostgreSQL too: TEST_POSTGRES_URL if set, else a throwaway server started
// here when PostgreSQL's binaries are installed, else the PostgreSQL suites are skipped with the reason.
//
// Builds first (`tsc -b`), then runs each test as the JavaScript tsc compiled it (dist/…/x.test.js)
// on plain node: tsx's loader costs every test process about 1.5 s of CPU. Tests that no build emits
// (the client's and the dashboard's) run from their .ts through tsx (scripts/test-typescript.mjs).
// Give test files by their source path: node scripts/test.mjs packages/server/src/x/y.test.ts
// The slowest files start first (slowestFirst below), as timed by the run before.
// `--no-browser` leaves out the test files that drive Chromium: CI runs them once, on the Node
// version whose run ends the log, not once per Node version.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { startThrowawayPostgres } from './throwaway-postgres.mjs'

const root = resolve(import.meta.dirname, '..')
const args = process.argv.slice(2)
const only = args.filter((arg) => !arg.startsWith('--'))
const missing = only.filter((path) => !existsSync(path))
if (missing.length > 0) {
  console.error(`No such test file: ${missing.join(', ')}`)
  process.exit(2)
}
const withoutBrowser = args.includes('--no-browser')

/** Whether a test file drives a browser (it imports playwright-core or the browser test helpers). */
function drivesBrowser(path) {
  return /from '[^']*(playwright-core|\/browser\.js|\/testing\/browser)'/.test(
    readFileSync(join(root, path), 'utf8'),
  )
}

function testFiles() {
  if (only.length > 0) {
    return only.map((path) => relative(root, resolve(path)))
  }
  return readdirSync(join(root, 'packages'), { recursive: true })
    .map(String)
    .filter((path) => path.endsWith('.test.ts') && !path.includes('node_modules') && !path.includes('dist'))
    .map((path) => join('packages', path))
    .filter((path) => !withoutBrowser || !drivesBrowser(path))
    .sort()
}

/**
 * Where each run leaves every test file's wall time (ms, by source path) for the next run to order
 * the files by. Under node_modules, so a fresh install starts without it.
 */
const timesPath = join(root, 'node_modules', '.cache', 'keyturn-test-times.json')

function knownTimes() {
  try {
    return JSON.parse(readFileSync(timesPath, 'utf8'))
  } catch {
    return {}
  }
}

/**
 * The files, slowest first. node runs them in the order given, `concurrency` at a time: a long file
 * that starts near the end runs alone on one core while the other idles, so the long ones go first
 * and the short ones fill in behind them. Times come from the last run that ran each file; a file
 * without one is guessed from what it starts: processes and browsers take ten seconds or so, the
 * rest about two.
 */
function slowestFirst(files) {
  const times = knownTimes()
  const estimate = (path) =>
    times[path] ??
    (/startServerProcess|watchKeyturn|spawn\(|fork\(|launchChromium|playwright-core|startFaultJourney/.test(
      readFileSync(join(root, path), 'utf8'),
    )
      ? 10_000
      : 2_000)
  const estimates = new Map(files.map((path) => [path, estimate(path)]))
  return [...files].sort((a, b) => estimates.get(b) - estimates.get(a))
}

/** Adds this run's file times (scripts/test-timing.mjs wrote them) to the ones kept for the next run. */
function keepTimes(timingsFile) {
  if (!existsSync(timingsFile)) {
    return
  }
  const times = knownTimes()
  for (const line of readFileSync(timingsFile, 'utf8').split('\n')) {
    if (line !== '') {
      const { file, ms } = JSON.parse(line)
      times[file] = ms
    }
  }
  mkdirSync(join(root, 'node_modules', '.cache'), { recursive: true })
  writeFileSync(timesPath, `${JSON.stringify(times, null, 1)}\n`)
}

/**
 * packages/<p>/src/<x>.test.ts → packages/<p>/dist/<x>.test.js when the build emitted it (else the
 * .ts itself). Only files found in src are run, so a test deleted from src never runs from a stale dist.
 */
function runnable(path) {
  const compiled = path.replace(/^(packages\/[^/]+)\/src\/(.+)\.test\.ts$/, '$1/dist/$2.test.js')
  return compiled !== path && existsSync(join(root, compiled)) ? compiled : path
}

try {
  execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-b'], { cwd: root, stdio: 'inherit' })
} catch {
  console.error('# tsc -b failed: no tests were run')
  process.exit(1)
}

const env = { ...process.env }
// V8's compiled code of every module, kept between the suite's processes and runs (node's module
// compile cache): each test process and each `keyturn` it starts compiles less.
env.NODE_COMPILE_CACHE ??= join(root, 'node_modules', '.cache', 'keyturn-node-compile')
// Each test process appends its wall time here (scripts/test-timing.mjs); the reporter prints them.
const timings = mkdtempSync(join(tmpdir(), 'keyturn-test-timings-'))
env.KEYTURN_TEST_TIMINGS = join(timings, 'timings.jsonl')
let stop = () => {}
if (!env.TEST_POSTGRES_URL) {
  const postgres = await startThrowawayPostgres('keyturn-test-pg')
  if (postgres.url) {
    env.TEST_POSTGRES_URL = postgres.url
    stop = postgres.stop
    console.log(`# PostgreSQL suites run against a throwaway server at ${postgres.url}`)
  } else {
    env.TEST_POSTGRES_SKIP = postgres.skip
    console.log(`# PostgreSQL suites are skipped: ${postgres.skip}`)
  }
}
// One migrated database per engine that every test process copies its own from, instead of each
// migrating (testing/each-database.ts).
const { writeMigratedSqlite } = await import('../packages/server/dist/testing/each-database.js')
try {
  await writeMigratedSqlite(join(timings, 'migrated.db'))
  env.TEST_SQLITE_TEMPLATE = join(timings, 'migrated.db')
} catch (error) {
  // Each SQLite suite migrates on its own, and reports the failure where it happens.
  console.log(`# No migrated SQLite template: ${error instanceof Error ? error.message : error}`)
}
let dropTemplate = async () => {}
if (env.TEST_POSTGRES_URL) {
  const { createMigratedTemplate } = await import('../packages/server/dist/testing/postgres-template.js')
  try {
    const template = await createMigratedTemplate(env.TEST_POSTGRES_URL)
    env.TEST_POSTGRES_TEMPLATE = template.name
    dropTemplate = () => template.drop().catch(() => {})
  } catch (error) {
    // Each PostgreSQL suite migrates on its own, and reports the failure where it happens.
    console.log(`# No migrated PostgreSQL template: ${error instanceof Error ? error.message : error}`)
  }
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stop()
    process.exit(130)
  })
}

// Test files run in parallel processes (each test has its own database or schema); node's default of
// one fewer than the cores means one at a time on a 2-core machine.
const concurrency = Math.max(2, availableParallelism())
const child = spawn(
  process.execPath,
  [
    '--enable-source-maps',
    '--import',
    './scripts/test-typescript.mjs',
    '--import',
    './scripts/test-timing.mjs',
    './scripts/test-run.mjs',
    String(concurrency),
    ...slowestFirst(testFiles()).map((path) => join(root, runnable(path))),
  ],
  {
    cwd: root,
    env,
    stdio: 'inherit',
  },
)
const code = await new Promise((done) => child.on('close', (exitCode) => done(exitCode ?? 1)))
await dropTemplate()
stop()
keepTimes(env.KEYTURN_TEST_TIMINGS)
rmSync(timings, { recursive: true, force: true })
process.exit(code)
