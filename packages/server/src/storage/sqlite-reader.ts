import type SqliteDatabase from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from './database.js'

/**
 * A second, read-only connection to a SQLite database file, for the one read a validation makes
 * (docs/decisions/0054-sqlite-validation-reader.md). Kysely builds, compiles and queues every
 * statement behind the writes on its one connection; this connection runs a statement prepared once,
 * synchronously, with the parameters in place, and never waits for a write. Being another
 * connection, it sees committed data only: a write is acknowledged after its commit
 * (storage/sqlite-group-commit.ts), so a request that follows an acknowledged write reads it, and
 * a read never sees a group's writes before their commit, as other processes never do.
 *
 * Only for files: an in-memory database has no second connection (its stores read through Kysely).
 */
export class SqliteReader {
  readonly #open: () => SqliteDatabase.Database
  /** Opened by the first read: commands that never validate (migrations, backups) never open it. */
  #sqlite: SqliteDatabase.Database | undefined
  readonly #statements = new Map<string, SqliteDatabase.Statement>()

  constructor(open: () => SqliteDatabase.Database) {
    this.#open = open
  }

  /** The first row `text` reads with `parameters` (`?` placeholders), or undefined. */
  get<Row>(text: string, parameters: readonly unknown[]): Row | undefined {
    let statement = this.#statements.get(text)
    if (statement === undefined) {
      // The texts are a few fixed shapes (the callers build them once), not one per request.
      this.#sqlite ??= this.#open()
      statement = this.#sqlite.prepare(text)
      this.#statements.set(text, statement)
    }
    return statement.get(...parameters) as Row | undefined
  }

  close(): void {
    this.#statements.clear()
    if (this.#sqlite?.open === true) {
      this.#sqlite.close()
    }
  }
}

const readers = new WeakMap<Kysely<Database>, SqliteReader>()

/** Ties `reader` to the Kysely instance of the same file (storage/connect.ts). */
export function attachSqliteReader(db: Kysely<Database>, reader: SqliteReader): void {
  readers.set(db, reader)
}

/**
 * The reader of the file `db` works on; undefined for PostgreSQL, an in-memory database, and a
 * transaction (whose reads must see its own writes: they go through it).
 */
export function sqliteReaderOf(db: Kysely<Database>): SqliteReader | undefined {
  return readers.get(db)
}
