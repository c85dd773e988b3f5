import { type Kysely, sql } from 'kysely'
import type { Database, DatabaseKind } from './database.js'

/**
 * Runs `work` in a transaction that may write. On SQLite it starts with BEGIN IMMEDIATE, taking the
 * write lock first: a deferred transaction that later writes can fail with SQLITE_BUSY when another
 * process writes meanwhile, whatever the busy timeout.
 */
export async function writeTransaction<T>(
  db: Kysely<Database>,
  kind: DatabaseKind,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  if (kind === 'postgres') {
    return db.transaction().execute(work)
  }
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection)
    try {
      const result = await work(connection)
      await sql`commit`.execute(connection)
      return result
    } catch (error) {
      await sql`rollback`.execute(connection)
      throw error
    }
  })
}
