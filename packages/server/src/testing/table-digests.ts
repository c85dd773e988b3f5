import { createHash } from 'node:crypto'
import { sql } from 'kysely'
import type { Connection } from '../storage/connect.js'

/** Tables a request may write by design even when refused or replayed: its claim, and the schema's bookkeeping. */
export const bookkeepingTables: ReadonlySet<string> = new Set([
  'idempotency_keys',
  'kysely_migration',
  'kysely_migration_lock',
])

/** Every row of every table but the bookkeeping ones, as a digest per table: what a test compares before and after. */
export async function tableDigests(connection: Connection): Promise<Record<string, string>> {
  const { db, kind } = connection
  const schema =
    kind === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined
  const tables = (await db.introspection.getTables())
    .filter(
      (table) => (schema === undefined || table.schema === schema) && !bookkeepingTables.has(table.name),
    )
    .map((table) => table.name)
    .sort()
  const digests: Record<string, string> = {}
  for (const table of tables) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db)
    const text = rows
      .map((row) => JSON.stringify(row))
      .sort()
      .join('\n')
    digests[table] = createHash('sha256').update(text).digest('hex')
  }
  return digests
}
