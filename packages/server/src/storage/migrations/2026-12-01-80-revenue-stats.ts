import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'

/** The revenue-relevant counts, added to `daily_stats` (stats/): existing rows read zero. */
const revenueColumns = [
  'licenses_sold',
  'provider_renewals',
  'payment_failures',
  'refund_revocations',
] as const

/** Daily counts of what payment-provider integrations did, beside the other daily counts. */
export function revenueStats(kind: DatabaseKind) {
  const count = kind === 'postgres' ? 'bigint' : 'integer'
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const column of revenueColumns) {
        await db.schema
          .alterTable('daily_stats')
          .addColumn(column, count, (col) => col.notNull().defaultTo(0))
          .execute()
      }
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const column of revenueColumns) {
        await db.schema.alterTable('daily_stats').dropColumn(column).execute()
      }
    },
  }
}
