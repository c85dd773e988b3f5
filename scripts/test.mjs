#!/usr/bin/env node
// Runs every package's *.test.ts in one `node --test` run, so the output ends with one node test
// runner summary. Covers PostgreSQL too: TEST_POSTGRES_URL if set, else a throwaway server started
// here when PostgreSQL's binaries are installed, else the PostgreSQL suites are skipped with the reason.
//
// Builds first (`tsc -b`), then runs each test as the JavaScript tsc compiled it (dist/…/x.test.js)
// on plain node: tsx's loader costs every test process about 1.5 s of CPU. Tests that no build emits
// (the client's and the dashboard's) run from their .ts through tsx (scripts/test-typescript.mjs).
// Give test files by their source path: node scripts/test.mjs packages/server/src/x/y.test.ts
// `--no-browser` leaves out the test files that drive Chromium: CI runs them once, on the Node
// version whose run ends the log, not once per Node version.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { startThrowawayPostgres } from './throwaway-postgres.mjs'

const root = resolve(import.meta.dirname, '..')
const args = process.argv.slice(2)
const only = args.filter((arg) => !arg.startsWith('--'))
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
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=./scripts/test-reporter.mjs',
    ...testFiles().map(runnable),
  ],
  {
    cwd: root,
    env,
    stdio: 'inherit',
  },
)
const code = await new Promise((done) => child.on('close', (exitCode) => done(exitCode ?? 1)))
stop()
rmSync(timings, { recursive: true, force: true })
process.exit(code)
