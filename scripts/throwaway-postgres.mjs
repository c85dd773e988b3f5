/**
 * A throwaway PostgreSQL on a free loopback port, for the tests (scripts/test.mjs) and the benchmark
 * (bench/postgres.mjs): found among the installed binaries, run as the postgres user under root
 * (PostgreSQL refuses root), with durability off, deleted on stop.
 */
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

function findPostgresBin() {
  const candidates = [...(process.env.PATH ?? '').split(':')]
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: 'pipe' }).trim())
  } catch {}
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian)) {
    for (const version of readdirSync(debian).sort().reverse()) {
      candidates.push(join(debian, version, 'bin'))
    }
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')))
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

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/**
 * Starts PostgreSQL: resolves to `{ url, version, stop }` (stop is synchronous and idempotent), or
 * `{ skip: reason }`. For the tests, fsync, synchronous_commit and full_page_writes are off (their
 * data is thrown away); `durable: true` keeps PostgreSQL's defaults, every commit flushed to disk
 * before it is acknowledged, as in production (the benchmark measures durable writes, as production runs them).
 */
export async function startThrowawayPostgres(name = 'keyturn-pg', { durable = false } = {}) {
  const bin = findPostgresBin()
  if (bin === undefined) {
    return {
      skip: 'PostgreSQL is not installed (no initdb/pg_ctl found); install it to run the PostgreSQL parts',
    }
  }
  const isRoot = process.getuid?.() === 0
  const owner = isRoot ? postgresUid() : undefined
  if (isRoot && owner === undefined) {
    return { skip: 'running as root and there is no postgres user to run PostgreSQL as' }
  }
  const dir = mkdtempSync(join(tmpdir(), `${name}-`))
  const data = join(dir, 'data')
  if (owner !== undefined) {
    chmodSync(dir, 0o700)
    chownSync(dir, owner.uid, owner.gid)
  }
  const run = (command, args) => {
    const [file, argv] = isRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]]
      : [join(bin, command), args]
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  }
  let started = false
  let stopped = false
  const stop = () => {
    if (stopped) {
      return
    }
    stopped = true
    try {
      if (started) {
        run('pg_ctl', ['-w', '-D', data, '-m', 'immediate', 'stop'])
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  try {
    const port = await freePort()
    run('initdb', ['-A', 'trust', '--no-sync', '-U', 'postgres', '-E', 'UTF8', '-D', data])
    const durability = durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off'
    const options = `-p ${port} -k ${dir} -h 127.0.0.1${durability} -c max_connections=200`
    started = true
    run('pg_ctl', ['-w', '-D', data, '-o', options, '-l', join(dir, 'postgres.log'), 'start'])
    const version = run('pg_ctl', ['--version']).trim()
    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, version, stop }
  } catch (error) {
    stop()
    return { skip: `PostgreSQL did not start: ${error instanceof Error ? error.message : error}` }
  }
}
