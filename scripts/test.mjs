#!/usr/bin/env node
// Runs every package's *.test.ts in one `tsx --test` run, so the output ends with one node test
// runner summary. Covers PostgreSQL too: TEST_POSTGRES_URL if set, else a throwaway server started
// here when PostgreSQL's binaries are installed, else the PostgreSQL suites are skipped with the reason.
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

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

function findPostgresBin() {
  const candidates = []
  for (const dir of (process.env.PATH ?? '').split(':')) {
    candidates.push(dir)
  }
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim())
  } catch {}
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian)) {
    for (const version of readdirSync(debian).sort().reverse()) {
      candidates.push(join(debian, version, 'bin'))
    }
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')))
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer()
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => done(port))
    })
  })
}

function postgresUid() {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    return { uid, gid }
  } catch {
    return undefined
  }
}

/** Starts a throwaway PostgreSQL; returns its URL and a stop function, or the reason it cannot. */
async function startPostgres() {
  const bin = findPostgresBin()
  if (bin === undefined) {
    return {
      skip: 'PostgreSQL is not installed (no initdb/pg_ctl found); install it to run the PostgreSQL suites',
    }
  }
  const isRoot = process.getuid?.() === 0
  const owner = isRoot ? postgresUid() : undefined
  if (isRoot && owner === undefined) {
    return { skip: 'running as root and there is no postgres user to run PostgreSQL as' }
  }
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-pg-'))
  const data = join(dir, 'data')
  if (owner !== undefined) {
    chmodSync(dir, 0o700)
    chownSync(dir, owner.uid, owner.gid)
  }
  // PostgreSQL refuses to run as root: under root both commands run as the postgres user.
  const run = (command, args) => {
    const [file, argv] = isRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]]
      : [join(bin, command), args]
    execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'inherit'] })
  }
  const port = await freePort()
  run('initdb', ['-A', 'trust', '--no-sync', '-U', 'postgres', '-E', 'UTF8', '-D', data])
  const options = `-p ${port} -k ${dir} -h 127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`
  run('pg_ctl', ['-w', '-D', data, '-o', options, '-l', join(dir, 'postgres.log'), 'start'])
  let stopped = false
  const stop = () => {
    if (stopped) {
      return
    }
    stopped = true
    try {
      run('pg_ctl', ['-w', '-D', data, '-m', 'immediate', 'stop'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop }
}

const env = { ...process.env }
let stop = () => {}
if (!env.TEST_POSTGRES_URL) {
  const postgres = await startPostgres()
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
  ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...testFiles()],
  {
    cwd: root,
    env,
    stdio: 'inherit',
  },
)
const code = await new Promise((done) => child.on('close', (exitCode) => done(exitCode ?? 1)))
stop()
process.exit(code)
