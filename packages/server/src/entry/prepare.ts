import { buildApp } from '../app.js'
import { ConfigError, loadConfig } from '../config.js'
import { systemClock } from '../core/clock.js'
import { deriveSecretKeys } from '../core/secrets.js'
import { serveCountersToWorkers } from '../protection/counters.js'
import { connect } from '../storage/connect.js'
import { migrateToLatest } from '../storage/migrate.js'
import { databaseShown, type Environment, masterSecret, type Output, printBanner } from './common.js'

/** The primary's share of `keyturn serve --workers`, between `prepare` and the workers' start. */
export interface Preparation {
  /**
   * Once the workers listen on `url`: creates the first admin key if there is none yet, prints the
   * banner (and that key, once) and closes the primary's database connection.
   */
  announce(url: string): Promise<void>
  /** Closes the database connection without announcing (the workers did not start). Idempotent. */
  close(): Promise<void>
}

/**
 * For several processes serving one database (`keyturn serve --workers`), run once before they
 * start: checks the configuration, applies pending migrations and creates the SQLite master-secret
 * file, so the workers (`serve(env, output, { isWorker: true })`) find everything in place.
 * The first admin key waits for `announce`: as in `serve`, nobody must miss it because the port was
 * taken.
 */
export async function prepare(env: Environment, output: Output): Promise<Preparation> {
  const config = loadConfig(env)
  if (config.database.kind === 'sqlite' && config.database.path === ':memory:') {
    throw new ConfigError([
      'KEYTURN_DATABASE_URL: an in-memory database (sqlite::memory:) lives in one process; several workers need a file or PostgreSQL',
    ])
  }
  const connection = connect(config.database)
  // Without Redis the workers count in this process (protection/counters.ts).
  const stopCounting = config.protection.redisUrl === undefined ? serveCountersToWorkers() : () => {}
  let closed: Promise<void> | undefined
  const closeDatabase = () => {
    closed ??= connection.close()
    return closed
  }
  const close = async () => {
    stopCounting()
    await closeDatabase()
  }
  try {
    await migrateToLatest(connection)
    const secretKeys = deriveSecretKeys(await masterSecret(config, connection))
    // Only the services are used: the app never listens or registers its routes.
    const { services } = buildApp({ db: connection.db, clock: systemClock, secretKeys, logger: false })
    // As in `serve`: KEYTURN_ADMIN_KEY before any worker opens the port, a generated key after.
    if (config.adminKey !== undefined) {
      await services.apiKeys.bootstrapAdmin(config.adminKey)
    }
    return {
      async announce(url) {
        try {
          const { createdSecret } =
            config.adminKey === undefined ? await services.apiKeys.bootstrapAdmin(undefined) : {}
          printBanner(output, url, databaseShown(config), createdSecret)
        } finally {
          await closeDatabase()
        }
      },
      close,
    }
  } catch (error) {
    await close()
    throw error
  }
}
