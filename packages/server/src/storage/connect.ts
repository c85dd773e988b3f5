import { mkdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import type SqliteDatabase from 'better-sqlite3'
import {
  Kysely,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  SqliteDialect,
  type SqliteDialectConfig,
} from 'kysely'
import type pg from 'pg'
import { type ReachabilityChange, ReachabilityTracker } from '../core/reachability.js'
import { isStalePreparedStatement } from './constraint-violations.js'
import type { Database, DatabaseKind } from './database.js'
import { databaseFaultOf } from './database-faults.js'
import { hostListClient, parsePostgresTarget } from './postgres-hosts.js'
import { attachSqliteReader, SqliteReader } from './sqlite-reader.js'

const require = createRequire(import.meta.url)

/**
 * PostgreSQL's driver loads with the first PostgreSQL connection: a server on SQLite never holds
 * pg's modules (about 2.7 MB of heap; docs/decisions/0025-memory-heap-limits.md). require, not import():
 * `connect` stays synchronous.
 */
function pgDriver(): typeof pg {
  return require('pg') as typeof pg
}

/** SQLite's driver, likewise (small: its native part loads with the first database anyway). */
function sqliteDriver(): typeof SqliteDatabase {
  return require('better-sqlite3') as typeof SqliteDatabase
}

export interface Connection {
  readonly db: Kysely<Database>
  readonly kind: DatabaseKind
  /** For SQLite files: where the database lives (the data folder holds the generated secret). */
  readonly sqlitePath: string | undefined
  /** Whether the database answers, as the connection last saw it, and who hears when that changes. */
  readonly reachability: Reachability
  close(): Promise<void>
}

export type { ReachabilityChange } from '../core/reachability.js'

/**
 * A PostgreSQL server that restarts, fails over or drops off the network ends the pool's
 * connections. The pool reports it here (once per outage, not once per connection or request) and
 * reconnects by itself: the next request that needs a connection opens a new one.
 */
export interface Reachability {
  readonly reachable: boolean
  /** Connection errors seen since start (idle connections ended by the server included). */
  readonly errors: number
  /** The listener hears each change: lost (with the first error) and restored. */
  onChange(listener: (change: ReachabilityChange) => void): void
  /** Connections open, idle and requests waiting for one (PostgreSQL; zero on SQLite). */
  pool(): { readonly total: number; readonly idle: number; readonly waiting: number }
}

class ReachabilityState extends ReachabilityTracker implements Reachability {
  readonly #pool: Reachability['pool']

  constructor(pool: Reachability['pool']) {
    super()
    this.#pool = pool
  }

  pool() {
    return this.#pool()
  }
}

export type DatabaseLocation =
  | { readonly kind: 'sqlite'; readonly path: string }
  | {
      readonly kind: 'postgres'
      readonly url: string
      /** Named (prepared) statements; off behind a pooler that cannot keep them (PgBouncer < 1.21). */
      readonly preparedStatements?: boolean
    }

/** Reads `sqlite:<path>`, `sqlite::memory:` or `postgres://…`; undefined when it is none of them. */
export function parseDatabaseUrl(url: string): DatabaseLocation | undefined {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length)
    return path === '' ? undefined : { kind: 'sqlite', path }
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    try {
      parsePostgresTarget(url)
    } catch {
      return undefined
    }
    return { kind: 'postgres', url }
  }
  return undefined
}

/** How long a SQLite statement waits for a lock another connection or process holds. */
const sqliteBusyTimeoutMs = 5000

/**
 * Puts the database file in WAL mode, waiting for the lock it needs as every other statement does.
 * The busy timeout alone does not cover it: on a file not yet in WAL mode (a new one), the switch
 * reads the file's header, then asks for the write lock; when another connection took that lock in
 * between (a second process starting on the same new file, switching it too), SQLite answers
 * SQLITE_BUSY at once instead of waiting: this connection keeps its read lock while it asks, and
 * the other waits for every read lock to go before it writes, so waiting would never end. Each try
 * starts afresh without the read lock, so a moment later the switch gets the lock, or finds the file
 * in WAL mode already (the other process switched it) and has nothing to write.
 */
function switchToWal(sqlite: SqliteDatabase.Database): void {
  const deadline = performance.now() + sqliteBusyTimeoutMs
  for (;;) {
    try {
      sqlite.pragma('journal_mode = WAL')
      return
    } catch (error) {
      if (!isSqliteBusy(error) || performance.now() >= deadline) {
        throw error
      }
      // connect() is synchronous, and this waits only while another process holds the lock.
      Atomics.wait(pauseCell, 0, 0, walRetryPauseMs)
    }
  }
}

const walRetryPauseMs = 5
const pauseCell = new Int32Array(new SharedArrayBuffer(4))

function isSqliteBusy(error: unknown): boolean {
  return error instanceof Error && 'code' in error && String(error.code).startsWith('SQLITE_BUSY')
}

export interface ConnectOptions {
  /** For PostgreSQL: the schema to use (tests isolate themselves this way). */
  readonly searchPath?: string
  readonly poolSize?: number
  /**
   * PostgreSQL: the longest a query waits for a pooled connection, and the longest a statement may
   * run, in milliseconds (KEYTURN_DATABASE_TIMEOUT_MS). Unset: no bound (migrations, one-off commands).
   */
  readonly timeoutMs?: number
  /** For SQLite in memory: start from this serialized database (tests: a migrated template). */
  readonly sqliteImage?: Buffer
}

/** The one place that opens databases. */
export function connect(location: DatabaseLocation, options: ConnectOptions = {}): Connection {
  if (location.kind === 'sqlite') {
    const isMemory = location.path === ':memory:'
    if (!isMemory) {
      mkdirSync(dirname(location.path), { recursive: true })
    }
    const SqliteDriver = sqliteDriver()
    const sqlite = new SqliteDriver(isMemory && options.sqliteImage ? options.sqliteImage : location.path)
    // The busy timeout first: switching to WAL needs a lock, and another process starting on the
    // same file (a second `keyturn serve`, migrating) may hold it for a moment.
    sqlite.pragma(`busy_timeout = ${sqliteBusyTimeoutMs}`)
    switchToWal(sqlite)
    sqlite.pragma('synchronous = FULL')
    sqlite.pragma('foreign_keys = ON')
    // Each write of a group commit is a savepoint (storage/sqlite-group-commit.ts): keep the
    // statement journals that make them undoable in memory, not in temporary files.
    sqlite.pragma('temp_store = MEMORY')
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
    const reader = isMemory
      ? undefined
      : new SqliteReader(() => {
          const readOnly = new SqliteDriver(location.path)
          readOnly.pragma(`busy_timeout = ${sqliteBusyTimeoutMs}`)
          readOnly.pragma('query_only = ON')
          return readOnly
        })
    if (reader !== undefined) {
      attachSqliteReader(db, reader)
    }
    // Kysely closes its driver only if a query opened it: close the database in any case.
    const close = async () => {
      await db.destroy()
      reader?.close()
      if (sqlite.open) {
        sqlite.close()
      }
    }
    const reachability = new ReachabilityState(() => ({ total: 0, idle: 0, waiting: 0 }))
    return { db, kind: 'sqlite', sqlitePath: isMemory ? undefined : location.path, reachability, close }
  }
  const timeouts =
    options.timeoutMs === undefined
      ? {}
      : {
          connectionTimeoutMillis: options.timeoutMs,
          // The server cancels a statement that runs too long (a clean error, the connection kept);
          // the client gives up a little later on a connection that no longer answers at all.
          statement_timeout: options.timeoutMs,
          query_timeout: options.timeoutMs + 1000,
        }
  const target = parsePostgresTarget(location.url)
  const pool = new (pgDriver().Pool)({
    connectionString: target.url,
    // A host list, or only a writable server wanted: the pool's connections choose their host.
    ...(target.hosts.length > 1 || target.readWrite
      ? { Client: hostListClient(pgDriver().Client, target) }
      : {}),
    max: options.poolSize ?? 10,
    // A peer gone silent (a cut cable, a dropped route) is noticed by TCP keepalive too.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    ...timeouts,
    ...(options.searchPath === undefined ? {} : { options: `-c search_path=${options.searchPath}` }),
  })
  const reachability = new ReachabilityState(() => ({
    total: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
  }))
  // The pool emits `error` when the server ends an idle connection (a restart: 57P01). Unheard, Node
  // would end the process; heard, the connection is dropped and the next request opens another.
  pool.on('error', (error) => reachability.lost(error))
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: guardedPool(pool, reachability, {
        named: location.preparedStatements !== false,
        failFast: options.timeoutMs !== undefined,
      }),
    }),
  })
  const close = async () => {
    await db.destroy()
    if (!pool.ended) {
      await pool.end() // Kysely ends the pool only if a query used it
    }
  }
  return { db, kind: 'postgres', sqlitePath: undefined, reachability, close }
}

/**
 * The pool as Kysely sees it, with two duties added.
 *
 * Faults: a connection that failed (the server restarted, the connection was cut, a query timed
 * out) is destroyed when it is released, never handed out again, and the failure is reported to
 * `reachability`; a connection that errors while checked out between two queries is heard too (pg
 * emits `error` on it, which would otherwise end the process).
 *
 * Failing fast (`failFast`, with timeouts set): once a connection could not be opened or a
 * statement got no answer at all (the database is down or silent, not merely one connection lost),
 * one request at a time tries the database (and finds it back); the others answer
 * `database_unavailable` at once instead of each waiting out the timeout, and instead of queuing
 * behind each other for it. An idle connection ended by the server, or a statement the server
 * cancelled, does not count: the database answered.
 *
 * Named statements (`named`): PostgreSQL parses and plans an unnamed statement on every run, and
 * node-postgres sends every query unnamed unless it is given a name. Named, a statement is parsed
 * once per connection, and PostgreSQL keeps a generic plan for it once five runs have shown that
 * planning for the given values gains nothing: validation by key runs about half again as many
 * requests per second (docs/decisions/0027-postgresql-shared-statements.md). Names go to the first `maxNamedStatements` distinct SQL
 * texts only (list queries vary with their filters), so no connection holds more prepared
 * statements than that. Off behind a pooler that cannot keep them.
 */
function guardedPool(
  pool: pg.Pool,
  reachability: ReachabilityState,
  options: { readonly named: boolean; readonly failFast: boolean },
): PostgresPool {
  const { named, failFast } = options
  // One wrapper per pooled client: Kysely keeps its connection object per client it is given.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  /** A connection could not be opened, or a statement got no answer, since the last answer. */
  let down = false
  /** A request is trying the database while it is down; the others fail fast. */
  let probing = false
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let broken: unknown
    const fail = (error: unknown) => {
      broken ??= error
      probing = false
      reachability.lost(error)
    }
    client.on('error', fail)
    const run = (text: string, values: unknown[] | undefined) =>
      named ? runNamed(client, text, values) : client.query({ text, values })
    const query = async (text: unknown, values?: unknown[]) => {
      if (broken !== undefined) {
        throw new Error('The database connection was lost', { cause: broken })
      }
      const since = reachability.errors
      try {
        const result = await (typeof text === 'string'
          ? run(text, values)
          : client.query(text as pg.Submittable))
        down = false
        probing = false
        reachability.answered(since)
        return result
      } catch (error) {
        // A statement the server cancelled (statement_timeout: 57014) leaves the connection and
        // the database well: the request answers 503, nothing else changes.
        if (databaseFaultOf(error) !== undefined && !isCancelledByServer(error)) {
          down ||= isReadTimeout(error)
          fail(error)
        } else {
          // The database answered, if only to refuse this statement (a constraint, a timeout it
          // enforced): it is up, and a probing request must not leave the others failing fast.
          down = false
          probing = false
        }
        throw error
      }
    }
    return {
      query: query as unknown as PostgresPoolClient['query'],
      // pg destroys a client released with an error instead of pooling it again.
      release: () => client.release(broken === undefined ? undefined : asError(broken)),
    }
  }
  return {
    connect: async () => {
      if (failFast && down) {
        if (probing) {
          throw new Error(unreachableMessage)
        }
        probing = true
      }
      let client: pg.PoolClient
      try {
        client = await pool.connect()
      } catch (error) {
        down = true
        probing = false
        reachability.lost(error)
        throw error
      }
      let wrapper = wrappers.get(client)
      if (wrapper === undefined) {
        wrapper = wrap(client)
        wrappers.set(client, wrapper)
      }
      return wrapper
    },
    end: () => pool.end(),
  }
}

function isCancelledByServer(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === '57014'
}

/** node-postgres gave up waiting for a statement's answer (`query_timeout`): the peer is silent. */
function isReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message.includes('Query read timeout')
}

/** What a request that fails fast hears (storage/database-faults.ts knows it). */
export const unreachableMessage = 'The database is not answering; another request is trying it'

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value))
}

async function runNamed(client: pg.PoolClient, text: string, values: unknown[] | undefined) {
  const name = statementName(text)
  if (name === undefined) {
    return client.query({ text, values })
  }
  try {
    return await client.query({ text, values, name })
  } catch (error) {
    // A migration by a newer Keyturn process changed a table under a prepared `select *`:
    // PostgreSQL refuses to run the old statement. This text goes unnamed from now on.
    if (!isStalePreparedStatement(error)) {
      throw error
    }
    statementNames.set(text, null)
    // Inside a transaction the refusal aborted it: the caller runs it again (storage/write-transaction.ts).
    return await client.query({ text, values }).catch(() => Promise.reject(error))
  }
}

/** Each SQL text's statement name; null: never named again (see `runNamed`). */
const statementNames = new Map<string, string | null>()
const maxNamedStatements = 256

function statementName(text: string): string | undefined {
  let name = statementNames.get(text)
  if (name === undefined && statementNames.size < maxNamedStatements) {
    name = `keyturn_${statementNames.size}`
    statementNames.set(text, name)
  }
  return name ?? undefined
}

/** Distinct SQL texts kept prepared; list queries vary with their filters, so bound it. */
const maxCachedStatements = 256

/**
 * Kysely prepares every query anew, which costs more than running it (the benchmark's profile). A
 * better-sqlite3 statement is reusable, and Kysely uses it synchronously on its one connection, so
 * each SQL text is prepared once.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectConfig['database'] {
  const statements = new Map<string, SqliteDatabase.Statement>()
  return {
    close: () => {
      statements.clear()
      sqlite.close()
    },
    prepare: (sql: string) => {
      let statement = statements.get(sql)
      if (statement === undefined) {
        if (statements.size >= maxCachedStatements) {
          statements.clear()
        }
        statement = sqlite.prepare(sql)
        statements.set(sql, statement)
      }
      return statement
    },
  }
}
