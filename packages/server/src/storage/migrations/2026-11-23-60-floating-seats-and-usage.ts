import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Floating seats and metered usage (docs/decisions/0015-floating-seats-and-usage.md):
 * - `licenses.heartbeat_ttl` (seconds, null: activations never lapse), `max_uses` (null: unmetered),
 *   `uses` and `uses_reset_at`;
 * - `activations.last_heartbeat_at` and `expires_at` (null: never lapses). Existing activations get
 *   their `last_seen_at` as last heartbeat; they belong to licenses without a TTL, so never lapse.
 * The partial indexes serve the sweep (oldest lapsed first) and the per-license lapsed counts.
 */
export function floatingSeatsAndUsage(kind: DatabaseKind) {
  const types = columnTypes(kind)
  const counter = kind === 'sqlite' ? 'integer' : 'bigint'
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('licenses').addColumn('heartbeat_ttl', 'integer').execute()
      await db.schema.alterTable('licenses').addColumn('max_uses', counter).execute()
      await db.schema
        .alterTable('licenses')
        .addColumn('uses', counter, (col) => col.notNull().defaultTo(0))
        .execute()
      await db.schema.alterTable('licenses').addColumn('uses_reset_at', types.timestamp).execute()
      await db.schema.alterTable('activations').addColumn('last_heartbeat_at', types.timestamp).execute()
      await db.schema.alterTable('activations').addColumn('expires_at', types.timestamp).execute()
      await sql`update activations set last_heartbeat_at = last_seen_at`.execute(db)
      await db.schema
        .createIndex('activations_expires_at')
        .on('activations')
        .column('expires_at')
        .where(sql.ref('expires_at'), 'is not', null)
        .execute()
      await db.schema
        .createIndex('activations_license_id_expires_at')
        .on('activations')
        .columns(['license_id', 'expires_at'])
        .where(sql.ref('expires_at'), 'is not', null)
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('activations_license_id_expires_at').execute()
      await db.schema.dropIndex('activations_expires_at').execute()
      await db.schema.alterTable('activations').dropColumn('expires_at').execute()
      await db.schema.alterTable('activations').dropColumn('last_heartbeat_at').execute()
      await db.schema.alterTable('licenses').dropColumn('uses_reset_at').execute()
      await db.schema.alterTable('licenses').dropColumn('uses').execute()
      await db.schema.alterTable('licenses').dropColumn('max_uses').execute()
      await db.schema.alterTable('licenses').dropColumn('heartbeat_ttl').execute()
    },
  }
}
