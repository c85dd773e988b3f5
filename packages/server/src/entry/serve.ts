import { buildApp } from '../app.js'
import { type Config, ConfigError, loadConfig } from '../config.js'
import { startBackgroundWork } from '../core/background-loop.js'
import { systemClock } from '../core/clock.js'
import { deriveSecretKeys } from '../core/secrets.js'
import type { App } from '../http/app-types.js'
import { dashboardPath, findDashboard } from '../http/dashboard.js'
import { loggerOptions } from '../http/logger.js'
import {
  type CounterStore,
  memoryCounters,
  RedisHealth,
  redisCounters,
  workerCounters,
} from '../protection/counters.js'
import { type Connection, connect } from '../storage/connect.js'
import { databaseFaultOf } from '../storage/database-faults.js'
import { migrateToLatest } from '../storage/migrate.js'
import {
  databaseShown,
  type Environment,
  masterSecret,
  type Output,
  printBanner,
  printSetupLink,
} from './common.js'

export interface RunningServer {
  /** The address the server listens on, e.g. http://127.0.0.1:3000. */
  readonly url: string
  /**
   * Stops accepting connections, lets in-flight requests finish (for at most `shutdownGracePeriodMs`),
   * then closes the database.
   */
  close(): Promise<void>
}

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
      ...(config.publicUrl === undefined ? {} : { publicUrl: config.publicUrl }),
      ...(config.oidc === undefined
        ? {}
        : {
            oidc: {
              ...config.oidc,
              redirectUri: `${config.publicUrl ?? `http://${config.host}:${config.port}`}/operator/oidc/callback`,
            },
          }),
      ...(config.mail === undefined ? {} : { mail: config.mail }),
      expiryNoticeDays: config.expiryNoticeDays,
      portal: {
        enabled: config.portal,
        url: `${config.publicUrl ?? `http://${config.host}:${config.port}`}/portal`,
      },
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
    if (options.isWorker !== true) {
      const { createdSecret } =
        config.adminKey === undefined ? await built.services.apiKeys.bootstrapAdmin(undefined) : {}
      printBanner(output, url, databaseShown(config), createdSecret)
      const setupToken = await built.services.operators.setupTokenIfNoOperators()
      if (setupToken !== undefined) {
        printSetupLink(output, `${config.publicUrl ?? url}${dashboardPath}/setup#${setupToken}`)
      }
    }
    const running = app
    if (config.portal && options.isWorker !== true) {
      warnAboutPortal(running, config)
    }
    if (config.mail !== undefined && config.publicUrl === undefined && options.isWorker !== true) {
      running.log.warn(
        'KEYTURN_SMTP_URL is set but KEYTURN_PUBLIC_URL is unset: operator invitations and password-reset links in mails point to the address each request reached the server at',
      )
    }
    if (config.oidc !== undefined && config.publicUrl === undefined && options.isWorker !== true) {
      running.log.warn(
        `KEYTURN_OIDC_ISSUER is set but KEYTURN_PUBLIC_URL is unset: the identity provider sends people back to http://${config.host}:${config.port}/operator/oidc/callback`,
      )
    }
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

/** The portal mails codes and links: say at start-up what it lacks. */
function warnAboutPortal(app: { log: { warn(message: string): void } }, config: Config): void {
  if (config.mail === undefined) {
    app.log.warn(
      'KEYTURN_PORTAL is on but KEYTURN_SMTP_URL is unset: customers cannot sign in (no code can be mailed)',
    )
  }
  if (config.publicUrl === undefined) {
    app.log.warn(
      `KEYTURN_PORTAL is on but KEYTURN_PUBLIC_URL is unset: links in mails point to http://${config.host}:${config.port}/portal`,
    )
  }
}
