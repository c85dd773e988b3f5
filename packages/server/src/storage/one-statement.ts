import { type Compilable, type Kysely, type RawBuilder, sql } from 'kysely'
import type { Database } from './database.js'
import { isSqlite } from './write-transaction.js'

/**
 * Runs several writes as ONE PostgreSQL statement: every write but the last becomes a
 * data-modifying `WITH` of the last. PostgreSQL runs each of them exactly once, whether or not the
 * rest refers to it, and a statement outside a transaction block is a transaction of its own: they
 * commit together, or (a constraint refuses one) none does. One round trip where `BEGIN`, one per
 * write and `COMMIT` were (UnitOfWork.writeOne). The writes must not touch the same row twice, and
 * do not see each other's changes, only what an earlier one returned (`returnedBy`): inserts of new
 * rows into different tables, and updates whose returned rows a later insert reads. Answers the
 * rows the last write returns (`Row`: what its RETURNING reads, as the driver hands them back).
 */
export async function executeAsOne<Row = unknown>(
  db: Kysely<Database>,
  writes: readonly (Compilable | RawBuilder<unknown>)[],
): Promise<Row[]> {
  const last = writes.at(-1)
  if (last === undefined) {
    return []
  }
  const before = writes.slice(0, -1).map((write, index) => sql`${sql.raw(`write_${index}`)} as (${write})`)
  const statement = before.length === 0 ? sql<Row>`${last}` : sql<Row>`with ${sql.join(before)} ${last}`
  return (await statement.execute(db)).rows
}

/**
 * Whether `db` can run `executeAsOne`'s statement as a transaction of its own: on PostgreSQL, outside
 * any transaction. SQLite has no data-modifying `WITH` (its group commit shares the commit instead),
 * and inside a transaction the statement would not be atomic by itself.
 */
export function runsAlone(db: Kysely<Database>): boolean {
  return !db.isTransaction && !isSqlite(db)
}

/** The rows that write number `index` of `executeAsOne`'s list returned, for a later write to read. */
export function returnedBy(index: number): RawBuilder<unknown> {
  return sql.raw(`write_${index}`)
}

/**
 * `INSERT INTO table (…) SELECT <row> FROM write_<index> AS changed`: the row is inserted once for
 * each row that write returned (one at most, for the writes here), so not at all when it changed
 * nothing, where `VALUES` would insert it anyway, or (a column read from it as null) fail the
 * whole statement with an error in PostgreSQL's log. `row`'s values may read `changed.<column>`
 * (`sql.ref`); PostgreSQL types the other, bare parameters by their target columns, as in `VALUES`.
 */
export function insertIfReturned<Table extends keyof Database & string>(
  db: Kysely<Database>,
  table: Table,
  row: Readonly<Record<string, unknown>>,
  index: number,
) {
  const selected = Object.entries(row).map(([column, value]) => sql`${value}`.as(column))
  return db
    .insertInto(table)
    .columns(Object.keys(row) as never)
    .expression(db.selectFrom(returnedBy(index).as('changed')).select(selected) as never)
}
