import { createHash } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import type { Connection } from '../storage/connect.js'
import type { Database } from '../storage/database.js'

/** Tables a request may write by design even when refused or replayed: its claim, and the schema's bookkeeping. */
export const bookkeepingTables: ReadonlySet<string> = new Set([
  'idempotency_keys',
  'kysely_migration',
  'kysely_migration_lock',
])

/**
 * The tables a connection's digests cover, read from the catalogue on its first digest: the tests
 * that digest compare a few hundred times on one database whose tables stay the same.
 */
const tablesOf = new WeakMap<Kysely<Database>, Promise<string[]>>()

function digestedTables(connection: Connection): Promise<string[]> {
  let tables = tablesOf.get(connection.db)
  if (tables === undefined) {
    tables = listTables(connection)
    tablesOf.set(connection.db, tables)
  }
  return tables
}

async function listTables({ db, kind }: Connection): Promise<string[]> {
  const schema =
    kind === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
      : undefined
  return (await db.introspection.getTables())
    .filter(
      (table) => (schema === undefined || table.schema === schema) && !bookkeepingTables.has(table.name),
    )
    .map((table) => table.name)
    .sort()
}

/**
 * Every row of every table but the bookkeeping ones, as a digest per table: what a test compares
 * before and after, on one engine. PostgreSQL digests every table in one statement (one round trip
 * instead of one per table); SQLite, in-process, reads the rows.
 */
export async function tableDigests(connection: Connection): Promise<Record<string, string>> {
  const tables = await digestedTables(connection)
  const digests: Record<string, string> = {}
  if (connection.kind === 'postgres') {
    const perTable = tables.map(
      (table) =>
        sql`select ${table}::text as name, md5(coalesce(string_agg(r::text, E'\\n' order by r::text), '')) as digest from ${sql.table(table)} r`,
    )
    const { rows } = await sql<{
      name: string
      digest: string
    }>`${sql.join(perTable, sql` union all `)}`.execute(connection.db)
    for (const row of rows) {
      digests[row.name] = row.digest
    }
    return digests
  }
  for (const table of tables) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(
      connection.db,
    )
    const text = rows
      .map((row) => JSON.stringify(row))
      .sort()
      .join('\n')
    digests[table] = createHash('sha256').update(text).digest('hex')
  }
  return digests
}
