import { type Kysely, sql } from 'kysely'
import type { Database } from './database.js'

/**
 * Group commit of SQLite write transactions ("several concurrent requests acknowledged by one commit,
 * none acknowledged before it"; docs/decisions/0023-sqlite-group-commit.md).
 *
 * Every write used to be its own `BEGIN IMMEDIATE … COMMIT`: one fsync, and every B-tree page it
 * touched written whole to the WAL, even the pages the next write touches again (the tables' and the
 * time-ordered indexes' last leaves, the events table's above all). Here the writes that reach the one
 * connection while a group is open run one after the other in the same transaction, each in its own
 * savepoint, so a write that fails rolls back alone; the group commits once, when the writes queued
 * before the commit are through, and only then does each of them return. A failed commit fails every
 * write of the group; none has been acknowledged.
 *
 * What it saves: measured with `npm run bench` (docs/decisions/0023-sqlite-group-commit.md).
 *
 * Reads on this connection see a group's writes before its commit, as they see a write
 * transaction's own rows: a read may answer with a change whose request has not returned yet, and
 * would lose it if the process died in between. No write is ever acknowledged before its commit,
 * and other processes see only committed data, as does the validation's reader
 * (storage/sqlite-reader.ts), the only other connection.
 */
export class SqliteGroupCommit {
  readonly #db: Kysely<Database>
  /** The group whose `BEGIN IMMEDIATE` is open on the connection, if one is. */
  #open: Group | undefined

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  /** Runs `work` in the open group (opening one if none is), then waits for the group's commit. */
  async run<T>(work: (connection: Kysely<Database>) => Promise<T>): Promise<T> {
    const { value, group } = await this.#db.connection().execute(async (connection) => {
      const group = this.#open ?? (await this.#begin(connection))
      await sql`savepoint write`.execute(connection)
      insideGroup.add(connection)
      try {
        const value = await work(connection)
        await sql`release write`.execute(connection)
        return { value, group }
      } catch (error) {
        await this.#undo(connection, group, error)
        throw error
      } finally {
        insideGroup.delete(connection)
      }
    })
    await group.committed
    return value
  }

  async #begin(connection: Kysely<Database>): Promise<Group> {
    await sql`begin immediate`.execute(connection)
    const group: Group = { committed: this.#commitSoon(() => group), lostBecause: undefined }
    // Handled here too: a group whose every write failed has no one waiting for its commit.
    group.committed.catch(() => undefined)
    this.#open = group
    return group
  }

  /** Undoes a failed write, and only it; the group goes on. */
  async #undo(connection: Kysely<Database>, group: Group, cause: unknown): Promise<void> {
    try {
      await sql`rollback to write`.execute(connection)
      await sql`release write`.execute(connection)
    } catch {
      // SQLite rolled the whole transaction back itself (it may on a full disk or an I/O error): the
      // group is lost, and its commit says so, and why, to the writes that had succeeded in it (a
      // full disk answers them 503 storage_full too).
      group.lostBecause ??= cause
      if (this.#open === group) {
        this.#open = undefined
      }
    }
  }

  /**
   * The group's commit, queued behind the writes already waiting for the connection once this turn
   * of the event loop has read its requests: a burst of requests shares one commit.
   */
  #commitSoon(groupOf: () => Group): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.#db
          .connection()
          .execute(async (connection) => {
            const group = groupOf()
            if (this.#open !== group) {
              throw new Error('SQLite rolled back a write transaction before its commit', {
                cause: group.lostBecause,
              })
            }
            this.#open = undefined
            try {
              await sql`commit`.execute(connection)
            } catch (error) {
              await sql`rollback`.execute(connection).catch(() => undefined)
              throw error
            }
          })
          .then(resolve, reject)
      })
    })
  }
}

interface Group {
  readonly committed: Promise<void>
  /** Why SQLite rolled the group back before its commit, if it did. */
  lostBecause: unknown
}

/** Connections inside a group's write: a nested write joins it (Kysely does not know it as a transaction). */
export const insideGroup = new WeakSet<Kysely<Database>>()
