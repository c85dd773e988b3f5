import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Events (events/): the audit log and the webhook outbox. One row per state change, written in the
 * change's transaction. `dispatched_at` stays null until the delivery worker has turned the event
 * into deliveries; the partial index keeps finding those cheap however long the log grows.
 */
export function events(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('events')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('type', 'text', (col) => col.notNull())
        .addColumn('occurred_at', types.timestamp, (col) => col.notNull())
        // No foreign keys: the log outlives the API keys and objects it names.
        .addColumn('product_id', 'text')
        .addColumn('actor_api_key_id', 'text')
        .addColumn('actor_role', 'text')
        .addColumn('request_id', 'text')
        .addColumn('data', types.json, (col) => col.notNull())
        .addColumn('dispatched_at', types.timestamp)
        .execute()
      await db.schema.createIndex('events_occurred_at').on('events').columns(['occurred_at', 'id']).execute()
      await db.schema
        .createIndex('events_product_id_occurred_at')
        .on('events')
        .columns(['product_id', 'occurred_at', 'id'])
        .execute()
      // Idempotency recovery finds the events a crashed request committed (idempotency/).
      await db.schema.createIndex('events_request_id').on('events').column('request_id').execute()
      await sql`create index events_undispatched on events (occurred_at) where dispatched_at is null`.execute(
        db,
      )
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('events').execute()
    },
  }
}
