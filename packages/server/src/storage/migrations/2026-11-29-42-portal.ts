import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * The customer portal (portal/): one-time sign-in codes (digests only), the machine transfers a
 * customer made (counted per license in a rolling window), and the policy fields that limit them.
 */
export function portal(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('portal_sign_in_codes')
        .addColumn('id', 'text', (col) => col.primaryKey())
        // HMAC of the lower-cased email: a code is asked for an address, customer or not.
        .addColumn('email_digest', 'text', (col) => col.notNull())
        .addColumn('customer_id', 'text')
        .addColumn('code_digest', 'text', (col) => col.notNull())
        .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('expires_at', types.timestamp, (col) => col.notNull())
        .addColumn('used_at', types.timestamp)
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createIndex('portal_sign_in_codes_email')
        .on('portal_sign_in_codes')
        .columns(['email_digest', 'created_at'])
        .execute()
      await db.schema
        .createIndex('portal_sign_in_codes_expiry')
        .on('portal_sign_in_codes')
        .column('expires_at')
        .execute()
      await db.schema
        .createTable('license_transfers')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('license_id', 'text', (col) => col.notNull())
        .addColumn('activation_id', 'text', (col) => col.notNull())
        .addColumn('customer_id', 'text', (col) => col.notNull())
        .addColumn('occurred_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createIndex('license_transfers_license')
        .on('license_transfers')
        .columns(['license_id', 'occurred_at'])
        .execute()
      await db.schema
        .createIndex('license_transfers_time')
        .on('license_transfers')
        .column('occurred_at')
        .execute()
      // null: unlimited. Existing policies get the default limit, 3 per 30 days.
      await db.schema
        .alterTable('policies')
        .addColumn('max_transfers', 'integer', (col) => col.defaultTo(3))
        .execute()
      await db.schema
        .alterTable('policies')
        .addColumn('transfer_period', 'integer', (col) => col.notNull().defaultTo(30 * 86_400))
        .execute()
    },
  }
}
