import { existsSync } from 'node:fs'
import { loadConfig } from '../config.js'
import { secretFilePath } from '../secret-file.js'
import { parseDatabaseUrl } from '../storage/connect.js'
import { BackupError, backupSqlite, restoreSqlite } from '../storage/sqlite-backup.js'
import type { Environment, Output } from './common.js'

/** What to use instead of `keyturn backup`/`restore` on PostgreSQL. */
const postgresBackupAdvice = [
  'For PostgreSQL, use its own tools (docs/operations/backups.md):',
  '  pg_dump --format=custom --file=keyturn.dump "$KEYTURN_DATABASE_URL"     # consistent while Keyturn serves',
  '  pg_restore --no-owner --dbname="$KEYTURN_DATABASE_URL" keyturn.dump    # into an empty database',
].join('\n')

/**
 * `keyturn backup`: a consistent copy of the SQLite database into the new file `out`, while servers
 * keep serving. The master secret is not in it (said on the output).
 */
export async function backup(env: Environment, out: string, output: Output): Promise<void> {
  const config = loadConfig(withoutPostgres(env, 'keyturn backup copies SQLite databases.'))
  if (config.database.kind === 'postgres') {
    throw new BackupError(`keyturn backup copies SQLite databases.\n${postgresBackupAdvice}`)
  }
  if (config.database.path === ':memory:') {
    throw new BackupError(
      'An in-memory database (sqlite::memory:) lives and dies with its server: nothing to back up.',
    )
  }
  const bytes = await backupSqlite(config.database.path, out)
  output.print(`Backed up ${config.database.path} to ${out} (${bytes} bytes; integrity check ok).`)
  output.print(
    config.secret === undefined
      ? `The master secret is not in the backup: keep ${secretFilePath(config.database.path)} safe too (separately); without it the backup's API keys and signing keys are unusable.`
      : "The master secret is not in the backup: keep KEYTURN_SECRET safe too (separately); without it the backup's API keys and signing keys are unusable.",
  )
}

/** `env`, unless it names PostgreSQL: then the advice, before loadConfig asks for KEYTURN_SECRET. */
function withoutPostgres(env: Environment, what: string): Environment {
  const location = env.KEYTURN_DATABASE_URL ? parseDatabaseUrl(env.KEYTURN_DATABASE_URL) : undefined
  if (location?.kind === 'postgres') {
    throw new BackupError(`${what}\n${postgresBackupAdvice}`)
  }
  return env
}

/** `keyturn restore`: puts a backup in place as the configured SQLite database, which must not exist yet. */
export async function restore(env: Environment, file: string, output: Output): Promise<void> {
  const config = loadConfig(withoutPostgres(env, 'keyturn restore restores SQLite databases.'))
  if (config.database.kind === 'postgres') {
    throw new BackupError(`keyturn restore restores SQLite databases.\n${postgresBackupAdvice}`)
  }
  if (config.database.path === ':memory:') {
    throw new BackupError('KEYTURN_DATABASE_URL: restore into a file (sqlite:<path>), not sqlite::memory:.')
  }
  await restoreSqlite(file, config.database.path)
  output.print(`Restored ${file} to ${config.database.path}. Start Keyturn to apply any newer migrations.`)
  const secretFile = secretFilePath(config.database.path)
  if (config.secret === undefined && !existsSync(secretFile)) {
    output.print(
      `Put the master secret of the backed-up server into ${secretFile} (or set KEYTURN_SECRET) before starting: without it Keyturn refuses to start, as the restored API keys and signing keys need it.`,
    )
  }
}
