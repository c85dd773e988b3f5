/**
 * @module Backup and restore of a SQLite database file (`keyturn backup`, `keyturn restore`), with
 * SQLite's online backup API through better-sqlite3: the copy is consistent while servers keep
 * writing to the source. PostgreSQL has pg_dump and pg_restore for this.
 */
import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  rmSync,
  statSync,
} from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import SqliteDatabase from 'better-sqlite3'

/** A backup or restore that was refused or failed; the message says why and what to do. */
export class BackupError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'BackupError'
  }
}

/**
 * Copies the database at `source` to the new file `out`, consistently, while other connections
 * (running servers) keep reading and writing. The copy is a self-contained file (no WAL beside it)
 * that passes `PRAGMA integrity_check`; `out` appears only once it is complete and is never
 * overwritten. Returns its size in bytes.
 */
export async function backupSqlite(source: string, out: string): Promise<number> {
  if (!existsSync(source)) {
    throw new BackupError(`There is no database at ${source}.`)
  }
  if (existsSync(out)) {
    throw new BackupError(`${out} exists: a backup never overwrites a file; name a new one.`)
  }
  const partial = partialBeside(out)
  try {
    const db = new SqliteDatabase(source, { fileMustExist: true })
    try {
      db.pragma('busy_timeout = 5000')
      // better-sqlite3 copies 100 pages per event-loop turn by default, and SQLite restarts the copy
      // whenever another connection writes between two steps: under steady writes it might never
      // finish. After its first (empty) step, this copies every page in one step, inside one read
      // transaction: one consistent snapshot, and writers are not blocked (WAL).
      ownerOnly(partial)
      await db.backup(partial, { progress: () => 0x7fffffff })
    } finally {
      db.close()
    }
    selfContained(partial)
    linkSync(partial, out) // fails if `out` appeared meanwhile: never overwrite
    return statSync(out).size
  } finally {
    rmSync(partial, { force: true })
  }
}

/**
 * Puts the backup `file` in place as the database at `target`, which must not exist yet (nor its
 * WAL). Checks first that `file` is an intact Keyturn database.
 */
export async function restoreSqlite(file: string, target: string): Promise<void> {
  if (!existsSync(file)) {
    throw new BackupError(`There is no file ${file}.`)
  }
  const present = [target, `${target}-wal`, `${target}-journal`].filter((path) => existsSync(path))
  if (present.length > 0) {
    throw new BackupError(
      `${present.join(' and ')} exist${present.length === 1 ? 's' : ''}: restore only puts a backup into an empty data location. Stop Keyturn, move the current database away, then restore.`,
    )
  }
  let db: SqliteDatabase.Database
  try {
    db = new SqliteDatabase(file, { readonly: true, fileMustExist: true })
  } catch (error) {
    throw new BackupError(`${file} is not a SQLite database: ${(error as Error).message}`)
  }
  mkdirSync(dirname(resolve(target)), { recursive: true })
  const partial = partialBeside(target)
  try {
    try {
      checkKeyturnDatabase(db, file)
      ownerOnly(partial)
      await db.backup(partial, { progress: () => 0x7fffffff })
    } finally {
      db.close()
    }
    selfContained(partial)
    linkSync(partial, target) // fails if a database appeared meanwhile
  } finally {
    rmSync(partial, { force: true })
  }
}

function checkKeyturnDatabase(db: SqliteDatabase.Database, file: string): void {
  let check: unknown
  try {
    check = db.pragma('integrity_check', { simple: true })
  } catch (error) {
    throw new BackupError(`${file} is not a SQLite database: ${(error as Error).message}`)
  }
  if (check !== 'ok') {
    throw new BackupError(`${file} is damaged (PRAGMA integrity_check: ${String(check)}).`)
  }
  const migrations = db
    .prepare("select count(*) as count from sqlite_master where type = 'table' and name = 'kysely_migration'")
    .get() as { count: number }
  if (migrations.count === 0) {
    throw new BackupError(`${file} is not a Keyturn database (it has no migrations table).`)
  }
}

/**
 * Creates `path` empty with mode 0600 before SQLite writes the copy into it: a backup holds every
 * license key and API-key digest, so only its owner may read it, whatever the umask (SQLite would
 * create it 0644 under the usual 022).
 */
function ownerOnly(path: string): void {
  closeSync(openSync(path, 'wx', 0o600))
  chmodSync(path, 0o600)
}

/** A hidden file name beside `path` for a copy in progress. */
function partialBeside(path: string): string {
  const dir = dirname(resolve(path))
  if (!existsSync(dir)) {
    throw new BackupError(`The folder ${dir} does not exist.`)
  }
  return join(dir, `.${basename(path)}.partial-${randomBytes(6).toString('hex')}`)
}

/**
 * The copy carries the source's WAL mode in its header: switch it to a rollback journal so it is
 * one file, check it, and flush it to disk before it gets its final name.
 */
function selfContained(path: string): void {
  const copy = new SqliteDatabase(path, { fileMustExist: true })
  try {
    copy.pragma('journal_mode = DELETE')
    const check = copy.pragma('integrity_check', { simple: true })
    if (check !== 'ok') {
      throw new BackupError(`The copy failed its integrity check (${String(check)}); nothing was written.`)
    }
  } finally {
    copy.close()
  }
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
