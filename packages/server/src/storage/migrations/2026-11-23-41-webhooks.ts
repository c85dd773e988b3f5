import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Webhook endpoints and their deliveries (webhooks/). A delivery is one event for one endpoint; the
 * worker claims due ones with a lease (`lease_id`, `lease_until`) so any number of processes share
 * the work, and one killed mid-delivery leaves it to be sent again once the lease runs out.
 */
export function webhooks(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('url', 'text', (col) => col.notNull())
        .addColumn('description', 'text')
        .addColumn('event_types', types.json, (col) => col.notNull())
        .addColumn('product_id', 'text', (col) => col.references('products.id'))
        /** AES-256-GCM, like signing keys. */
        .addColumn('secret_encrypted', 'text', (col) => col.notNull())
        .addColumn('disabled_at', types.timestamp)
        /** Since when every delivery attempt has failed; null after any success. */
        .addColumn('failing_since', types.timestamp)
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('updated_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createIndex('webhook_endpoints_created_at')
        .on('webhook_endpoints')
        .columns(['created_at', 'id'])
        .execute()
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('endpoint_id', 'text', (col) =>
          col.notNull().references('webhook_endpoints.id').onDelete('cascade'),
        )
        .addColumn('event_id', 'text', (col) => col.notNull().references('events.id').onDelete('cascade'))
        .addColumn('event_type', 'text', (col) => col.notNull())
        .addColumn('product_id', 'text')
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('next_attempt_at', types.timestamp)
        .addColumn('lease_id', 'text')
        .addColumn('lease_until', types.timestamp)
        .addColumn('last_attempt_at', types.timestamp)
        .addColumn('last_response_status', 'integer')
        .addColumn('last_response_body', 'text')
        .addColumn('last_error', 'text')
        .addColumn('delivered_at', types.timestamp)
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .execute()
      await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(
        db,
      )
      await db.schema
        .createIndex('webhook_deliveries_endpoint_created_at')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'created_at', 'id'])
        .execute()
      await db.schema
        .createIndex('webhook_deliveries_event_id')
        .on('webhook_deliveries')
        .column('event_id')
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('webhook_deliveries').execute()
      await db.schema.dropTable('webhook_endpoints').execute()
    },
  }
}
