import { setTimeout as delay } from 'node:timers/promises'
import { type Kysely, SqliteAdapter, sql } from 'kysely'
import { isDeadlock } from './constraint-violations.js'
import type { Database } from './database.js'

/**
 * Runs `work` in a transaction that may write. On SQLite it starts with BEGIN IMMEDIATE, taking the
 * write lock first: a deferred transaction that later writes can fail with SQLITE_BUSY when another
 * process writes meanwhile, whatever the busy timeout.
 */
export async function writeTransaction<T>(
  db: Kysely<Database>,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  // Already inside one (a store called from a unit of work): join it, so the caller's change and its
  // event commit together.
  if (db.isTransaction || inSqliteTransaction.has(db)) {
    return work(db)
  }
  if (!isSqlite(db)) {
    // PostgreSQL breaks a deadlock by aborting one of the transactions in it (two writers locking
    // the same rows in opposite orders, e.g. a license's entitlements replaced while an entitlement
    // is deleted and its links cascade): that one runs again, whole, instead of answering a 500.
    for (let attempt = 1; ; attempt++) {
      try {
        return await db.transaction().execute(work)
      } catch (error) {
        if (attempt >= deadlockAttempts || !isDeadlock(error)) {
          throw error
        }
        // A moment apart, so the writers that met do not meet again at once.
        await delay(Math.random() * 10 * attempt)
      }
    }
  }
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection)
    inSqliteTransaction.add(connection)
    try {
      const result = await work(connection)
      await sql`commit`.execute(connection)
      return result
    } catch (error) {
      await sql`rollback`.execute(connection)
      throw error
    } finally {
      inSqliteTransaction.delete(connection)
    }
  })
}

/** Runs of a PostgreSQL transaction aborted as a deadlock's victim, the first included. */
const deadlockAttempts = 5

/** SQLite connections inside `begin immediate`: Kysely does not know them as transactions. */
const inSqliteTransaction = new WeakSet<Kysely<Database>>()

/** The one engine capability check outside connect.ts: which SQL dialect a Kysely instance speaks. */
export function isSqlite(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter
}
