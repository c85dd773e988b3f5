/**
 * @module What the entry points share: the environment they read, where they print, the master
 * secret and the banner.
 */
import { randomBytes } from 'node:crypto'
import { resolve } from 'node:path'
import { type Config, ConfigError } from '../config.js'
import { secretCheckValue } from '../core/secrets.js'
import { dashboardPath } from '../http/dashboard.js'
import { createSecretFile, readSecretFile, secretFilePath } from '../secret-file.js'
import type { Connection } from '../storage/connect.js'
import { confirmSecretCheck, holdsSecretData } from '../storage/secret-check.js'

export interface Output {
  /** A line for the operator (stdout); never used for logs. */
  print(line: string): void
  /**
   * Where the JSON log lines go (default: stdout). Give the stream `print` writes to: one stream
   * keeps one order, so the banner stays below the start-up logs.
   */
  readonly logs?: { write(line: string): void }
}

export type Environment = Readonly<Record<string, string | undefined>>

/**
 * The master secret, confirmed against the database's check value (storage/secret-check.ts) before
 * anything uses it. A SQLite database without KEYTURN_SECRET gets a generated `keyturn.secret` only
 * while it is empty: one that holds API keys (a backup restored without its secret file) stops the
 * start, as does a secret other than the one the database was created with.
 */
export async function masterSecret(config: Config, connection: Connection): Promise<string> {
  if (config.secret !== undefined) {
    await confirmSecret(connection, config.secret, 'KEYTURN_SECRET')
    return config.secret
  }
  // loadConfig requires KEYTURN_SECRET for PostgreSQL; an in-memory database lives only this long.
  if (connection.sqlitePath === undefined) {
    return randomBytes(32).toString('base64url')
  }
  const file = resolve(secretFilePath(connection.sqlitePath))
  let secret = readSecretFile(file)
  if (secret === undefined) {
    if (await holdsSecretData(connection.db)) {
      throw new ConfigError([
        `KEYTURN_SECRET: the database ${resolve(connection.sqlitePath)} holds API keys, but its master secret file ${file} is missing (a backup restored without it?). Put the keyturn.secret that belongs to this database at ${file}, or set KEYTURN_SECRET to that secret, and start again. Keyturn generates a new secret only for an empty database: with a new one, every stored API key and signing key would stop working.`,
      ])
    }
    secret = createSecretFile(file)
  }
  await confirmSecret(connection, secret, file)
  return secret
}

/** Stops the start when `secret` is not the database's own; `source` names where it came from. */
async function confirmSecret(connection: Connection, secret: string, source: string): Promise<void> {
  if ((await confirmSecretCheck(connection.db, secretCheckValue(secret))) !== 'differs') {
    return
  }
  const where = source === 'KEYTURN_SECRET' ? 'KEYTURN_SECRET is' : `The master secret in ${source} is`
  const fix =
    source === 'KEYTURN_SECRET'
      ? 'Set KEYTURN_SECRET to the secret this database was created with (every process shares one)'
      : `Put this database's own keyturn.secret at ${source} (keep it with your backups), or set KEYTURN_SECRET to that secret`
  throw new ConfigError([
    `${where} not the one this database was created with: its API keys and signing keys would not work. ${fix}, and start again; the database was not changed.`,
  ])
}

/**
 * The database as the banner names it: a SQLite file by its absolute path (a relative
 * KEYTURN_DATABASE_URL is resolved against the working directory, so a start from another folder
 * would open another file); PostgreSQL without its URL (it may hold a password).
 */
export function databaseShown(config: Config): string {
  const { database } = config
  if (database.kind === 'postgres') {
    return 'PostgreSQL (KEYTURN_DATABASE_URL)'
  }
  return database.path === ':memory:'
    ? 'SQLite in memory (nothing is kept after the server stops)'
    : `SQLite at ${resolve(database.path)}`
}

/** Where the server is; on the first start also the admin key, which is never shown again. */
/** The first owner's one-time setup link, printed while no operator account exists. */
export function printSetupLink(output: Output, link: string): void {
  const rule = '='.repeat(78)
  for (const line of [
    '',
    rule,
    '  No operator account exists yet. Open this one-time link to create the owner',
    '  (it works once, for 24 hours; the next start prints a new one until then):',
    '',
    `      ${link}`,
    rule,
    '',
  ]) {
    output.print(line)
  }
}

export function printBanner(
  output: Output,
  url: string,
  database: string,
  adminSecret: string | undefined,
): void {
  if (adminSecret === undefined) {
    output.print(
      `Keyturn is listening on ${url} (API: ${url}/api/v0, reference: ${url}/docs, dashboard: ${url}${dashboardPath})`,
    )
    output.print(`Database: ${database}`)
    return
  }
  const rule = '='.repeat(78)
  for (const line of [
    '',
    rule,
    `  Keyturn is listening on ${url}`,
    `  API: ${url}/api/v0    Reference: ${url}/docs`,
    `  Dashboard: ${url}${dashboardPath} (people sign in there as operators)`,
    `  Database: ${database}`,
    '',
    '  First start: Keyturn created an admin API key. It is shown only this once:',
    '',
    `      ${adminSecret}`,
    '',
    '  Store it somewhere safe now (a password manager or your secret store). Try it:',
    '',
    `      curl -H 'Authorization: Bearer ${adminSecret}' ${url}/api/v0/products`,
    rule,
    '',
  ]) {
    output.print(line)
  }
}
