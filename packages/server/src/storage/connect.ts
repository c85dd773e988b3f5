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
import { isStalePreparedStatement } from './constraint-violations.js'
import type { Database, DatabaseKind } from './database.js'

const require = createRequire(import.meta.url)

/**
 * PostgreSQL's driver loads with the first PostgreSQL connection: a server on SQLite never holds
 * pg's modules (about 2.7 MB of heap; bench/history.md "Session 4: memory"). require, not import():
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
  close(): Promise<void>
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
    return { kind: 'postgres', url }
  }
  return undefined
}

export interface ConnectOptions {
  /** For PostgreSQL: the schema to use (tests isolate themselves this way). */
  readonly searchPath?: string
  readonly poolSize?: number
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
    sqlite.pragma('busy_timeout = 5000')
    sqlite.pragma('journal_mode = WAL')
    sqlite.pragma('synchronous = FULL')
    sqlite.pragma('foreign_keys = ON')
    // Each write of a group commit is a savepoint (storage/sqlite-group-commit.ts): keep the
    // statement journals that make them undoable in memory, not in temporary files.
    sqlite.pragma('temp_store = MEMORY')
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
    // Kysely closes its driver only if a query opened it: close the database in any case.
    const close = async () => {
      await db.destroy()
      if (sqlite.open) {
        sqlite.close()
      }
    }
    return { db, kind: 'sqlite', sqlitePath: isMemory ? undefined : location.path, close }
  }
  const pool = new (pgDriver().Pool)({
    connectionString: location.url,
    max: options.poolSize ?? 10,
    ...(options.searchPath === undefined ? {} : { options: `-c search_path=${options.searchPath}` }),
  })
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool: location.preparedStatements === false ? pool : withNamedStatements(pool),
    }),
  })
  const close = async () => {
    await db.destroy()
    if (!pool.ended) {
      await pool.end() // Kysely ends the pool only if a query used it
    }
  }
  return { db, kind: 'postgres', sqlitePath: undefined, close }
}

/**
 * PostgreSQL parses and plans an unnamed statement on every run, and node-postgres sends every query
 * unnamed unless it is given a name. Named, a statement is parsed once per connection, and
 * PostgreSQL keeps a generic plan for it once five runs have shown that planning for the given
 * values gains nothing. Validation by key on PostgreSQL (20,000 licenses, builds.mjs, 8 rounds):
 * +47% requests per second (bench/history.md, "Session 4: named statements on PostgreSQL"). Names go
 * to the first `maxNamedStatements` distinct SQL texts only (list queries vary with their filters),
 * so no connection holds more prepared statements than that.
 */
function withNamedStatements(pool: pg.Pool): PostgresPool {
  // One wrapper per pooled client: Kysely keeps its connection object per client it is given.
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    const query = (text: unknown, values?: unknown[]) =>
      typeof text === 'string' ? runNamed(client, text, values) : client.query(text as pg.Submittable)
    return { query: query as unknown as PostgresPoolClient['query'], release: () => client.release() }
  }
  return {
    connect: async () => {
      const client = await pool.connect()
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
