#!/usr/bin/env node
// Runs every package's *.test.ts in one `tsx --test` run, so the output ends with one node test
// runner summary. Covers PostgreSQL too: TEST_POSTGRES_URL if set, else a throwaway server started
// here when PostgreSQL's binaries are installed, else the PostgreSQL suites are skipped with the reason.
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { startThrowawayPostgres } from './throwaway-postgres.mjs'

const root = resolve(import.meta.dirname, '..')
const only = process.argv.slice(2)

function testFiles() {
  if (only.length > 0) {
    return only
  }
  return readdirSync(join(root, 'packages'), { recursive: true })
    .map(String)
    .filter((path) => path.endsWith('.test.ts') && !path.includes('node_modules') && !path.includes('dist'))
    .map((path) => join('packages', path))
    .sort()
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

const tsx = join(root, 'node_modules', '.bin', 'tsx')
// Test files run in parallel processes (each test has its own database or schema); node's default of
// one fewer than the cores means one at a time on a 2-core machine.
const concurrency = Math.max(2, availableParallelism())
const child = spawn(
  tsx,
  [
    '--import',
    './scripts/test-timing.mjs',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-reporter=./scripts/test-reporter.mjs',
    ...testFiles(),
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
