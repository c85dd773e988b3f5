import { type Kysely, sql } from 'kysely'
import type { Database } from './database.js'

/** Throws when the database cannot answer a trivial query. */
export async function checkDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db)
}
