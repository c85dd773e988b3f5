import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * How far the expiry-notice job (expiry-notices/) has read, one row per notice day (0: the
 * `license.expired` notice): licenses are read in expiry order from `(through, through_id)`, each
 * once per notice day, so a run reads only the licenses that reached their notice since the last.
 * The licenses are read through the existing expiry-order index (`licenses_expiration_sort`).
 */
export function expiryNotices(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('expiry_notice_cursors')
        .addColumn('days', 'integer', (col) => col.primaryKey())
        .addColumn('through', types.timestamp, (col) => col.notNull())
        .addColumn('through_id', 'text', (col) => col.notNull())
        .execute()
    },
  }
}
