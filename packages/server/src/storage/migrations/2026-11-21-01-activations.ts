import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Activations, and the per-license counter that enforces `maxActivations` atomically: an activation
 * is inserted in the same transaction as a guarded `activation_count + 1`.
 */
export function activations(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('licenses')
        .addColumn('activation_count', 'integer', (col) => col.notNull().defaultTo(0))
        .execute()
      await db.schema
        .createTable('activations')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('license_id', 'text', (col) => col.notNull().references('licenses.id').onDelete('cascade'))
        .addColumn('product_id', 'text', (col) => col.notNull().references('products.id'))
        .addColumn('fingerprint', 'text', (col) => col.notNull())
        .addColumn('name', 'text')
        .addColumn('metadata', types.json)
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('last_seen_at', types.timestamp, (col) => col.notNull())
        .addUniqueConstraint('activations_license_id_fingerprint', ['license_id', 'fingerprint'])
        .execute()
      await db.schema
        .createIndex('activations_license_id_created_at_id')
        .on('activations')
        .columns(['license_id', 'created_at', 'id'])
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('activations').execute()
      await db.schema.alterTable('licenses').dropColumn('activation_count').execute()
    },
  }
}
