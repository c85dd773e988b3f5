/**
 * @module A throwaway PostgreSQL primary and a streaming standby of it (the installed binaries:
 * `initdb`, `pg_basebackup -R`, `pg_ctl`), on free loopback ports, for failover tests. Under root
 * they run as the postgres user (PostgreSQL refuses root). Removed after the test.
 */
import { execFile, execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { promisify } from 'node:util'
import { freePort } from './free-port.js'

const run = promisify(execFile)

function findPostgresBin(): string | undefined {
  const debian = '/usr/lib/postgresql'
  const candidates = (process.env.PATH ?? '').split(':')
  if (existsSync(debian)) {
    for (const version of readdirSync(debian).sort().reverse()) {
      candidates.push(join(debian, version, 'bin'))
    }
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_basebackup')))
}

function postgresOwner(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    return { uid, gid }
  } catch {
    return undefined
  }
}

const bin = findPostgresBin()
const isRoot = process.getuid?.() === 0
const owner = isRoot ? postgresOwner() : undefined

/** false when a primary and a standby can be started here, else why not. */
export const replicationSkip: string | false =
  bin === undefined
    ? 'PostgreSQL is not installed (no initdb/pg_basebackup found)'
    : isRoot && owner === undefined
      ? 'running as root and there is no postgres user to run PostgreSQL as'
      : false

export interface Replication {
  readonly primaryPort: number
  readonly standbyPort: number
  /**
   * Stops the primary (`-m fast`: open connections are ended, and the standby receives every
   * committed transaction before the primary exits, as in a planned failover).
   */
  stopPrimary(): Promise<void>
  /** Promotes the standby to a primary; resolves once it accepts writes. */
  promoteStandby(): Promise<void>
}

export async function startReplication(t: Pick<TestContext, 'after'>): Promise<Replication> {
  if (bin === undefined) {
    throw new Error('PostgreSQL is not installed')
  }
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-replication-'))
  if (owner !== undefined) {
    chmodSync(dir, 0o700)
    chownSync(dir, owner.uid, owner.gid)
  }
  const pg = (command: string, args: string[]) =>
    isRoot
      ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args])
      : run(join(bin, command), args)
  const primary = join(dir, 'primary')
  const standby = join(dir, 'standby')
  const running = new Set<string>()
  t.after(async () => {
    for (const data of running) {
      await pg('pg_ctl', ['-w', '-D', data, '-m', 'immediate', 'stop']).catch(() => undefined)
    }
    rmSync(dir, { recursive: true, force: true })
  })
  const start = async (data: string, port: number) => {
    const options = `-p ${port} -k ${dir} -h 127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=50`
    running.add(data)
    await pg('pg_ctl', ['-w', '-D', data, '-o', options, '-l', `${data}.log`, 'start'])
  }
  const [primaryPort, standbyPort] = [await freePort(), await freePort()]
  await pg('initdb', ['-A', 'trust', '--no-sync', '-U', 'postgres', '-E', 'UTF8', '-D', primary])
  await start(primary, primaryPort)
  // -R: standby.signal and primary_conninfo, so it starts as a standby streaming from the primary.
  await pg('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primaryPort),
    '-U',
    'postgres',
    '-D',
    standby,
    '-R',
    '-X',
    'stream',
    '--no-sync',
  ])
  await start(standby, standbyPort)
  return {
    primaryPort,
    standbyPort,
    async stopPrimary() {
      await pg('pg_ctl', ['-w', '-D', primary, '-m', 'fast', 'stop'])
      running.delete(primary)
    },
    async promoteStandby() {
      await pg('pg_ctl', ['-w', '-D', standby, 'promote'])
    },
  }
}
