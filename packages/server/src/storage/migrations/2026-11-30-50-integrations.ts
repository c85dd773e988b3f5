import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Integrations with payment providers (integrations/): the integration itself (its signing secret
 * encrypted like webhook endpoint secrets, its item → product/policy mappings as JSON); the links
 * between a provider's objects (customer, subscription, order, transaction) and Keyturn's customer
 * and license; and every provider event received, once per dedupe key, with what it did or why not.
 */
export function integrations(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('integrations')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('provider', 'text', (col) => col.notNull())
        .addColumn('description', 'text')
        .addColumn('signing_secret_encrypted', 'text', (col) => col.notNull())
        .addColumn('mappings', types.json, (col) => col.notNull())
        .addColumn('on_refund', 'text', (col) => col.notNull())
        .addColumn('payment_grace_days', 'integer', (col) => col.notNull())
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('updated_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createTable('integration_links')
        .addColumn('integration_id', 'text', (col) =>
          col.notNull().references('integrations.id').onDelete('cascade'),
        )
        .addColumn('object_kind', 'text', (col) => col.notNull())
        .addColumn('object_id', 'text', (col) => col.notNull())
        .addColumn('customer_id', 'text')
        .addColumn('license_id', 'text')
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addPrimaryKeyConstraint('integration_links_pk', ['integration_id', 'object_kind', 'object_id'])
        .execute()
      await db.schema
        .createIndex('integration_links_license')
        .on('integration_links')
        .column('license_id')
        .execute()
      await db.schema
        .createTable('integration_events')
        .addColumn('integration_id', 'text', (col) =>
          col.notNull().references('integrations.id').onDelete('cascade'),
        )
        .addColumn('dedupe_key', 'text', (col) => col.notNull())
        .addColumn('event_type', 'text', (col) => col.notNull())
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('outcome', 'text', (col) => col.notNull())
        .addColumn('payload', types.json)
        .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('next_attempt_at', types.timestamp)
        .addColumn('received_at', types.timestamp, (col) => col.notNull())
        .addColumn('updated_at', types.timestamp, (col) => col.notNull())
        .addPrimaryKeyConstraint('integration_events_pk', ['integration_id', 'dedupe_key'])
        .execute()
      await db.schema
        .createIndex('integration_events_received')
        .on('integration_events')
        .columns(['integration_id', 'received_at'])
        .execute()
      await sql`create index integration_events_due on integration_events (next_attempt_at) where status = 'pending'`.execute(
        db,
      )
    },
  }
}
