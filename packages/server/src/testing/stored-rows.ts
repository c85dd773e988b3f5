import { type Kysely, sql } from 'kysely'
import type { Database } from '../storage/database.js'

/**
 * Every row of a table as stored (JSON columns parsed), for tests that prove what is never stored:
 * a secret scanned for in the events or the mail outbox.
 */
export async function storedRows(
  db: Kysely<Database>,
  table: 'events' | 'mail_outbox',
): Promise<Record<string, unknown>[]> {
  const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db)
  return rows.map((row) =>
    typeof row.data === 'string' && table === 'events' ? { ...row, data: JSON.parse(row.data) } : row,
  )
}
