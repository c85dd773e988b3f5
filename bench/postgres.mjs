/**
 * A throwaway PostgreSQL for the benchmark, started the way scripts/test.mjs starts one for the
 * tests (same binaries search, same settings), or the reason it cannot be started.
 */
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onCleanup } from './cleanup.mjs'
import { freePort } from './net.mjs'

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

/**
 * Starts PostgreSQL on a free loopback port with durability off (fsync, synchronous_commit and
 * full_page_writes off, like the test server): `{ url, version, stop }`, or `{ skip: reason }`.
 */
export async function startPostgres() {
  const bin = findPostgresBin()
  if (bin === undefined) {
    return { skip: 'PostgreSQL is not installed (no initdb/pg_ctl found)' }
  }
  const isRoot = process.getuid?.() === 0
  const owner = isRoot ? postgresUid() : undefined
  if (isRoot && owner === undefined) {
    return { skip: 'running as root and there is no postgres user to run PostgreSQL as' }
  }
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-bench-pg-'))
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
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  }
  let started = false
  const stopNow = () => {
    try {
      if (started) {
        run('pg_ctl', ['-w', '-D', data, '-m', 'immediate', 'stop'])
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const stop = onCleanup('PostgreSQL', stopNow)
  try {
    const port = await freePort()
    run('initdb', ['-A', 'trust', '--no-sync', '-U', 'postgres', '-E', 'UTF8', '-D', data])
    const options = `-p ${port} -k ${dir} -h 127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`
    started = true
    run('pg_ctl', ['-w', '-D', data, '-o', options, '-l', join(dir, 'postgres.log'), 'start'])
    const version = run('pg_ctl', ['--version']).trim()
    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, version, stop }
  } catch (error) {
    await stop()
    return { skip: `PostgreSQL did not start: ${error instanceof Error ? error.message : error}` }
  }
}
