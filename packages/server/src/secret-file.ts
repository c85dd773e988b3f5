import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/** Where the generated master secret of a SQLite database lives: `keyturn.secret` beside it. */
export function secretFilePath(sqlitePath: string): string {
  return join(dirname(sqlitePath), 'keyturn.secret')
}

/** The master secret in `path`, or undefined when there is no such file. */
export function readSecretFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return undefined
    }
    throw error
  }
}

/**
 * KEYTURN_SECRET for SQLite when none is configured: generated into the data folder (mode 0600)
 * when the database is empty, and read back afterwards, so API keys and signing keys survive
 * restarts. Another process that created the file meanwhile wins: its secret is returned.
 */
export function createSecretFile(path: string): string {
  const secret = randomBytes(32).toString('base64url')
  // 'wx' fails if another process created it meanwhile; then its secret is the one to use.
  try {
    writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: 'wx' })
    return secret
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      return readFileSync(path, 'utf8').trim()
    }
    throw error
  }
}
