import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'

const countColumns = [
  'validations_valid',
  'validations_invalid',
  'activations',
  'deactivations',
  'licenses_created',
  'licenses_renewed',
  'licenses_revoked',
] as const

/**
 * Daily per-product counters (stats/): one row per product and UTC day (`YYYY-MM-DD` text on both
 * engines, which sorts as time), to which every serving process adds what it counted since its
 * last flush. No foreign key: a flush never fails for a product that was deleted meanwhile.
 * The primary key serves one product's days; `daily_stats_day` every product's.
 */
export function dailyStats(kind: DatabaseKind) {
  const count = kind === 'postgres' ? 'bigint' : 'integer'
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      let table = db.schema
        .createTable('daily_stats')
        .addColumn('product_id', 'text', (col) => col.notNull())
        .addColumn('day', 'text', (col) => col.notNull())
      for (const column of countColumns) {
        table = table.addColumn(column, count, (col) => col.notNull().defaultTo(0))
      }
      await table.addPrimaryKeyConstraint('daily_stats_pkey', ['product_id', 'day']).execute()
      await db.schema.createIndex('daily_stats_day').on('daily_stats').column('day').execute()
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('daily_stats').execute()
    },
  }
}
