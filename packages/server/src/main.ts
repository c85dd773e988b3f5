/**
 * @module The server's entry points for the CLI: `serve(env)` (config → database → app → listen)
 * and `migrate(env)`. Only the CLI touches `process`; these take the environment and an output.
 */
import { randomBytes } from 'node:crypto'
import { buildApp } from './app.js'
import { type Config, loadConfig } from './config.js'
import { systemClock } from './core/clock.js'
import { deriveSecretKeys } from './core/secrets.js'
import { readOrCreateSecretFile } from './secret-file.js'
import { type Connection, connect } from './storage/connect.js'
import { migrateToLatest } from './storage/migrate.js'

export { ConfigError } from './config.js'

export interface Output {
  /** A line for the operator (stdout); never used for logs. */
  print(line: string): void
}

export interface RunningServer {
  /** The address the server listens on, e.g. http://127.0.0.1:3000. */
  readonly url: string
  /** Stops accepting connections, finishes in-flight requests, then closes the database. */
  close(): Promise<void>
}

export type Environment = Readonly<Record<string, string | undefined>>

export async function serve(env: Environment, output: Output): Promise<RunningServer> {
  const config = loadConfig(env)
  const connection = connect(config.database)
  try {
    await migrateToLatest(connection)
    const { app, services } = buildApp({
      db: connection.db,
      clock: systemClock,
      secretKeys: deriveSecretKeys(masterSecret(config, connection)),
      logger: {
        level: config.logLevel,
        redact: ['req.headers.authorization', 'req.headers.cookie'],
      },
    })
    const { createdSecret } = await services.apiKeys.bootstrapAdmin(config.adminKey)
    if (createdSecret !== undefined) {
      printFirstAdminKey(output, createdSecret)
    }
    const url = await app.listen({ port: config.port, host: config.host })
    return {
      url,
      close: async () => {
        await app.close()
        await connection.close()
      },
    }
  } catch (error) {
    await connection.close()
    throw error
  }
}

/** Applies pending migrations and reports what it did. */
export async function migrate(env: Environment, output: Output): Promise<void> {
  const config = loadConfig(env)
  const connection = connect(config.database)
  try {
    const applied = await migrateToLatest(connection)
    output.print(applied.length === 0 ? 'The database is up to date.' : `Applied: ${applied.join(', ')}`)
  } finally {
    await connection.close()
  }
}

function masterSecret(config: Config, connection: Connection): string {
  if (config.secret !== undefined) {
    return config.secret
  }
  // loadConfig requires KEYTURN_SECRET for PostgreSQL; an in-memory database lives only this long.
  return connection.sqlitePath === undefined
    ? randomBytes(32).toString('base64url')
    : readOrCreateSecretFile(connection.sqlitePath)
}

function printFirstAdminKey(output: Output, secret: string): void {
  const rule = '='.repeat(72)
  output.print(rule)
  output.print('Keyturn created the first admin API key. It is shown only this once:')
  output.print('')
  output.print(`    ${secret}`)
  output.print('')
  output.print('Use it as: Authorization: Bearer <key>. Store it somewhere safe now.')
  output.print(rule)
}
