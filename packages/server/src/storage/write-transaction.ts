import { setTimeout as delay } from 'node:timers/promises'
import { type Kysely, SqliteAdapter } from 'kysely'
import { isDeadlock, isStalePreparedStatement } from './constraint-violations.js'
import type { Database } from './database.js'
import { insideGroup, SqliteGroupCommit } from './sqlite-group-commit.js'

/**
 * Runs `work` in a transaction that may write, and returns once it is committed. On SQLite the
 * writes that arrive together share one transaction and one commit (storage/sqlite-group-commit.ts),
 * which starts with BEGIN IMMEDIATE, taking the write lock first: a deferred transaction that later
 * writes can fail with SQLITE_BUSY when another process writes meanwhile, whatever the busy timeout.
 */
export async function writeTransaction<T>(
  db: Kysely<Database>,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  // Already inside one (a store called from a unit of work): join it, so the caller's change and its
  // event commit together.
  if (db.isTransaction || insideGroup.has(db)) {
    return work(db)
  }
  if (!isSqlite(db)) {
    // PostgreSQL breaks a deadlock by aborting one of the transactions in it (two writers locking
    // the same rows in opposite orders, e.g. a license's entitlements replaced while an entitlement
    // is deleted and its links cascade): that one runs again, whole, instead of answering a 500. So
    // does one that a stale prepared statement aborted (storage/connect.ts `runNamed`).
    for (let attempt = 1; ; attempt++) {
      try {
        return await db.transaction().execute(work)
      } catch (error) {
        if (attempt >= deadlockAttempts || !(isDeadlock(error) || isStalePreparedStatement(error))) {
          throw error
        }
        // A moment apart, so the writers that met do not meet again at once.
        await delay(Math.random() * 10 * attempt)
      }
    }
  }
  return groupCommitOf(db).run(work)
}

/** Runs of a PostgreSQL transaction aborted as a deadlock's victim, the first included. */
const deadlockAttempts = 5

/** One group commit per SQLite database (its one connection). */
const groupCommits = new WeakMap<Kysely<Database>, SqliteGroupCommit>()

function groupCommitOf(db: Kysely<Database>): SqliteGroupCommit {
  let groupCommit = groupCommits.get(db)
  if (groupCommit === undefined) {
    groupCommit = new SqliteGroupCommit(db)
    groupCommits.set(db, groupCommit)
  }
  return groupCommit
}

/** The one engine capability check outside connect.ts: which SQL dialect a Kysely instance speaks. */
export function isSqlite(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof SqliteAdapter
}

/**
 * Whether the database's work runs on this process's event loop (SQLite), leaving libuv's thread
 * pool a core of its own; PostgreSQL's work takes that core in another process. Code outside
 * storage/ asks this, not which engine it is (tokens/ed25519.ts: where answers are signed).
 */
export function databaseRunsInProcess(db: Kysely<Database>): boolean {
  return isSqlite(db)
}
