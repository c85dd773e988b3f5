/**
 * @module The server's entry points for the CLI: `serve(env)` (config → database → app → listen),
 * `prepare(env)` (the primary's share when `keyturn serve --workers` runs several) and
 * `migrate(env)`. Only the CLI touches `process`; these take the environment and an output.
 */
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { buildApp } from './app.js'
import { type Config, ConfigError, loadConfig } from './config.js'
import { startBackgroundWork } from './core/background-loop.js'
import { systemClock } from './core/clock.js'
import { applyHeapLimits } from './core/heap-limits.js'
import { deriveSecretKeys, secretCheckValue } from './core/secrets.js'
import type { App } from './http/app-types.js'
import { dashboardPath, findDashboard } from './http/dashboard.js'
import { loggerOptions } from './http/logger.js'
import {
  type CounterStore,
  memoryCounters,
  RedisHealth,
  redisCounters,
  serveCountersToWorkers,
  workerCounters,
} from './protection/counters.js'
import { createSecretFile, readSecretFile, secretFilePath } from './secret-file.js'
import { type Connection, connect, parseDatabaseUrl } from './storage/connect.js'
import { databaseFaultOf } from './storage/database-faults.js'
import { migrateToLatest } from './storage/migrate.js'
import { confirmSecretCheck, holdsSecretData } from './storage/secret-check.js'
import { BackupError, backupSqlite, restoreSqlite } from './storage/sqlite-backup.js'

export { ConfigError } from './config.js'
export { errorCatalogueMarkdown } from './http/problem-pages.js'
export { BackupError } from './storage/sqlite-backup.js'

export interface Output {
  /** A line for the operator (stdout); never used for logs. */
  print(line: string): void
  /**
   * Where the JSON log lines go (default: stdout). Give the stream `print` writes to: one stream
   * keeps one order, so the banner stays below the start-up logs.
   */
  readonly logs?: { write(line: string): void }
}

export interface RunningServer {
  /** The address the server listens on, e.g. http://127.0.0.1:3000. */
  readonly url: string
  /**
   * Stops accepting connections, lets in-flight requests finish (for at most `shutdownGracePeriodMs`),
   * then closes the database.
   */
  close(): Promise<void>
}

export type Environment = Readonly<Record<string, string | undefined>>

/** How long `close()` waits for in-flight requests before cutting their connections. */
export const shutdownGracePeriodMs = 10_000

export interface ServeOptions {
  /**
   * One of several processes serving the same database (`keyturn serve --workers`): the primary
   * has applied the migrations (`prepare`) and creates the first admin key and prints the banner
   * (`Preparation.announce`), so this one only listens and serves, and prints nothing.
   */
  readonly isWorker?: boolean
}

export async function serve(
  env: Environment,
  output: Output,
  options: ServeOptions = {},
): Promise<RunningServer> {
  const config = loadConfig(env)
  const connection = connect(config.database, { timeoutMs: config.databaseTimeoutMs })
  let app: App | undefined
  let counters: Counters | undefined
  try {
    if (options.isWorker !== true) {
      await migrateBeforeServing(config, connection)
    }
    counters = await openCounters(config, options.isWorker === true)
    const { protection } = config
    const secretKeys = deriveSecretKeys(await masterSecret(config, connection))
    const built = buildApp({
      db: connection.db,
      clock: systemClock,
      secretKeys,
      logger: { ...loggerOptions(config.logLevel), ...(output.logs ? { stream: output.logs } : {}) },
      dashboardRoot: findDashboard(),
      recordValidations: config.recordValidations,
      protection: {
        keyPerMinute: protection.keyPerMinute,
        ipPerMinute: protection.ipPerMinute,
        guessLimit: protection.guessLimit,
        guessBlockSeconds: protection.guessBlockSeconds,
        counters: counters.store,
      },
      trustProxy: protection.trustProxy,
      corsOrigins: protection.corsOrigins,
      webhooks: {
        allowHttp: config.webhookAllowHttp,
        allowPrivate: config.webhookAllowPrivate,
        leaseSeconds: config.webhookLeaseSeconds,
      },
      eventRetentionDays: config.eventRetentionDays,
      dependencies: {
        database: connection.reachability,
        ...(counters.redis === undefined ? {} : { redis: counters.redis }),
      },
    })
    app = built.app
    logReachability(connection, built.app)
    logRedisHealth(counters.redis, built.app)
    const opened = counters
    app.addHook('onClose', async () => opened.close())
    // KEYTURN_ADMIN_KEY exists before the port opens, so it is never refused with a 401 (nor /readyz
    // ok before it works). A generated first key waits until the server listens: if the port is
    // taken, no key is created that nobody saw, and the next start still prints one.
    if (options.isWorker !== true && config.adminKey !== undefined) {
      await built.services.apiKeys.bootstrapAdmin(config.adminKey)
    }
    const url = await listen(app, config)
    applyHeapLimits(config.heap)
    if (options.isWorker !== true) {
      const { createdSecret } =
        config.adminKey === undefined ? await built.services.apiKeys.bootstrapAdmin(undefined) : {}
      printBanner(output, url, databaseShown(config), createdSecret)
    }
    const running = app
    // A database outage is logged once when it starts (logReachability), not by every failed tick.
    const background = startBackgroundWork(built.background, {
      log: running.log,
      isQuiet: (error) => databaseFaultOf(error) !== undefined,
    })
    return {
      url,
      close: async () => {
        await background.stop()
        await shutdown(running, connection)
      },
    }
  } catch (error) {
    await app?.close()
    await counters?.close()
    await connection.close()
    throw error
  }
}

/**
 * Migrations may run longer than a request may wait (an index built over millions of rows): on
 * PostgreSQL they run on a connection of their own without the request timeouts.
 */
async function migrateBeforeServing(config: Config, serving: Connection): Promise<void> {
  if (config.database.kind === 'sqlite') {
    await migrateToLatest(serving)
    return
  }
  const unbounded = connect(config.database)
  try {
    await migrateToLatest(unbounded)
  } finally {
    await unbounded.close()
  }
}

/** An outage of the database is logged when it starts and when it ends, not with every request. */
function logReachability(connection: Connection, app: App): void {
  connection.reachability.onChange((change) => {
    if (change.reachable) {
      app.log.warn('the database answers again; requests are served normally')
    } else {
      app.log.error(
        { err: change.error },
        'the database does not answer; requests that need it get 503 database_unavailable until it is back',
      )
    }
  })
}

/** Redis going away is logged once when it goes and once when it is back, not with every request. */
function logRedisHealth(health: RedisHealth | undefined, app: App): void {
  health?.onChange((change) => {
    if (change.reachable) {
      app.log.warn('Redis answers again; rate limits are shared and enforced again')
    } else {
      app.log.warn(
        { err: change.error },
        'Redis does not answer; requests are served without counting rate limits (fail-open) until it is back',
      )
    }
  })
}

interface Counters {
  readonly store: CounterStore
  /** When the counts are in Redis: whether it answers. */
  readonly redis?: RedisHealth
  close(): Promise<void>
}

/** The longest a rate-limit count waits for Redis before the request goes through uncounted. */
const redisCommandTimeoutMs = 500

/**
 * Where this process counts: Redis when configured (every process shares it), else the cluster
 * primary for a `--workers` worker, else memory.
 */
async function openCounters(config: Config, isWorker: boolean): Promise<Counters> {
  const { redisUrl } = config.protection
  if (redisUrl !== undefined) {
    // Loaded only with Redis configured: most servers never need ioredis (about 2 MB of heap).
    const { Redis } = await import('ioredis')
    // Fail fast: a request waits for at most one retry, never for a reconnection queue, and never
    // longer than `redisCommandTimeoutMs` for a Redis that went silent.
    const redis = new Redis(redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      commandTimeout: redisCommandTimeoutMs,
      connectTimeout: redisCommandTimeoutMs * 2,
      // Reconnect attempts a second apart at most: the limits are shared again soon after Redis is.
      retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
    })
    // Heard (unheard, an `error` event would end the process): each failed count lets its request
    // through uncounted (fail-open), ioredis reconnects by itself, and the outage is logged once.
    const health = new RedisHealth(redis)
    try {
      await redis.connect()
    } catch (error) {
      redis.disconnect()
      throw new ConfigError([`KEYTURN_REDIS_URL: cannot connect to Redis (${(error as Error).message})`])
    }
    let closed = false
    return {
      store: redisCounters(redis, health),
      redis: health,
      async close() {
        if (!closed) {
          closed = true
          health.closing()
          // Connected: QUIT lets the commands under way finish. Not connected (Redis away): stop
          // reconnecting at once rather than wait for a connection to say goodbye on.
          if (redis.status === 'ready') {
            await redis.quit().catch(() => redis.disconnect())
          } else {
            redis.disconnect()
          }
        }
      },
    }
  }
  if (isWorker) {
    const store = workerCounters()
    return { store, close: async () => store.close() }
  }
  return { store: memoryCounters(), close: async () => {} }
}

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
    applyHeapLimits(config.heap)
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

/**
 * The OpenAPI 3.1 document exactly as `packages/protocol/openapi.json` holds it (pretty, stable key
 * order, final newline): what `GET /openapi.json` serves. Builds the app on an unused in-memory
 * database; nothing is read or written.
 */
export async function openApiJson(): Promise<string> {
  const connection = connect({ kind: 'sqlite', path: ':memory:' })
  const { app } = buildApp({
    db: connection.db,
    clock: systemClock,
    secretKeys: deriveSecretKeys(randomBytes(32).toString('base64url')),
    logger: false,
  })
  try {
    await app.ready()
    return `${JSON.stringify(app.swagger(), null, 2)}\n`
  } finally {
    await app.close()
    await connection.close()
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

async function shutdown(app: App, connection: Connection): Promise<void> {
  // A client that never finishes its request must not keep the process alive forever.
  const deadline = setTimeout(() => app.server.closeAllConnections(), shutdownGracePeriodMs)
  try {
    await app.close()
  } finally {
    clearTimeout(deadline)
    await connection.close()
  }
}

/**
 * The master secret, confirmed against the database's check value (storage/secret-check.ts) before
 * anything uses it. A SQLite database without KEYTURN_SECRET gets a generated `keyturn.secret` only
 * while it is empty: one that holds API keys (a backup restored without its secret file) stops the
 * start, as does a secret other than the one the database was created with.
 */
async function masterSecret(config: Config, connection: Connection): Promise<string> {
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
 * Listens on the configured port; a port already taken is said in words (which one, and how to pick
 * another) instead of Node's `EADDRINUSE`.
 */
async function listen(app: App, config: Config): Promise<string> {
  try {
    return await app.listen({ port: config.port, host: config.host })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new ConfigError(
        [
          `PORT: port ${config.port} on ${config.host} is already in use (another Keyturn, or another program, listens there). Stop it, or choose another port: PORT=${config.port === 3000 ? 3001 : config.port + 1} keyturn serve (or keyturn serve --port …).`,
        ],
        { cause: error },
      )
    }
    throw error
  }
}

/**
 * The database as the banner names it: a SQLite file by its absolute path (a relative
 * KEYTURN_DATABASE_URL is resolved against the working directory, so a start from another folder
 * would open another file); PostgreSQL without its URL (it may hold a password).
 */
function databaseShown(config: Config): string {
  const { database } = config
  if (database.kind === 'postgres') {
    return 'PostgreSQL (KEYTURN_DATABASE_URL)'
  }
  return database.path === ':memory:'
    ? 'SQLite in memory (nothing is kept after the server stops)'
    : `SQLite at ${resolve(database.path)}`
}

/** Where the server is; on the first start also the admin key, which is never shown again. */
function printBanner(output: Output, url: string, database: string, adminSecret: string | undefined): void {
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
    `  Dashboard: ${url}${dashboardPath} (sign in with the key below)`,
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
