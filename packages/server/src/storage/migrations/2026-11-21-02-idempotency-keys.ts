import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Idempotency keys (idempotency/): one row per API key and `Idempotency-Key`, claimed by inserting it
 * (the primary key decides between concurrent requests, across processes), then holding the response.
 */
export function idempotencyKeys(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('api_key_id', 'text', (col) => col.notNull().references('api_keys.id').onDelete('cascade'))
        .addColumn('key', 'text', (col) => col.notNull())
        .addColumn('request_hash', 'text', (col) => col.notNull())
        .addColumn('request_id', 'text', (col) => col.notNull())
        // null while the claiming request runs.
        .addColumn('response_status', 'integer')
        .addColumn('response_content_type', 'text')
        .addColumn('response_body', 'text')
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('expires_at', types.timestamp, (col) => col.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pkey', ['api_key_id', 'key'])
        .execute()
      await db.schema
        .createIndex('idempotency_keys_expires_at')
        .on('idempotency_keys')
        .column('expires_at')
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('idempotency_keys').execute()
    },
  }
}
