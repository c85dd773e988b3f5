import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Payment grace (integrations/): when a payment provider reports a failed payment, the license keeps
 * working until `payment_grace_ends_at`, then validates `payment_overdue` until the next payment
 * clears it. A column of the license, so validation reads it with the license in its one statement.
 */
export function paymentGrace(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('licenses').addColumn('payment_grace_ends_at', types.timestamp).execute()
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('licenses').dropColumn('payment_grace_ends_at').execute()
    },
  }
}
