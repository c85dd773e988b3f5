import { randomBytes } from 'node:crypto'
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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
  // Written whole to a file of its own, then linked into place: `link` fails if another process
  // created the file meanwhile (then its secret is the one to use), and no process ever reads a
  // secret file that is still being written.
  const pending = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  writeFileSync(pending, `${secret}\n`, { mode: 0o600, flag: 'wx' })
  try {
    linkSync(pending, path)
    return secret
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      return readFileSync(path, 'utf8').trim()
    }
    throw error
  } finally {
    rmSync(pending, { force: true })
  }
}
