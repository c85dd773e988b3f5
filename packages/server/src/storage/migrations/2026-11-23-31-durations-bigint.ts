import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'

/**
 * `policies.duration` and `licenses.first_activation_duration` hold seconds up to 100 years
 * (protocol's maxDurationSeconds, 3,162,240,000), past PostgreSQL's 32-bit `integer` (2,147,483,647):
 * a policy of 70 years or a renewal of a license waiting for its first activation failed with a 500
 * (found in an adversarial re-run; docs/decisions/0008-hostile-input.md). SQLite integers are 64-bit already.
 *
 * Migration 50 creates both columns as `bigint` on PostgreSQL now. This one widens them where 50 ran
 * before that change; on a new database it runs first (names sort), finds neither column, and does
 * nothing.
 */
export function durationsBigint(kind: DatabaseKind) {
  const columns = [
    { table: 'policies', column: 'duration' },
    { table: 'licenses', column: 'first_activation_duration' },
  ]
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (kind !== 'postgres') {
        return
      }
      for (const { table, column } of columns) {
        const narrow = await sql<{ found: number }>`
          select 1 as found from information_schema.columns
          where table_schema = current_schema() and table_name = ${table}
            and column_name = ${column} and data_type = 'integer'`.execute(db)
        if (narrow.rows.length > 0) {
          await db.schema
            .alterTable(table)
            .alterColumn(column, (col) => col.setDataType('bigint'))
            .execute()
        }
      }
    },

    async down(): Promise<void> {
      // Narrowing back could fail on stored values; bigint holds everything integer did.
    },
  }
}
