import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * The mail outbox (mail/): one row per message, written in the transaction of the change that
 * causes it and sent by a background job. Like webhook deliveries, due rows are claimed with a
 * lease (`lease_id`, `lease_until`) so several processes send each message once. The payload
 * (recipient, subject, bodies) is encrypted with a key derived from the master secret and set to
 * null once the message is delivered or given up; the row stays as the delivery log.
 */
export function mailOutbox(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('mail_outbox')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('template', 'text', (col) => col.notNull())
        .addColumn('product_id', 'text')
        .addColumn('customer_id', 'text')
        .addColumn('payload_encrypted', 'text')
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('next_attempt_at', types.timestamp)
        .addColumn('lease_id', 'text')
        .addColumn('lease_until', types.timestamp)
        .addColumn('last_attempt_at', types.timestamp)
        .addColumn('last_error', 'text')
        .addColumn('sent_at', types.timestamp)
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .alterTable('customers')
        .addColumn('mail_opt_out', 'integer', (col) => col.notNull().defaultTo(0))
        .execute()
      await sql`create index mail_outbox_due on mail_outbox (next_attempt_at) where status = 'pending'`.execute(
        db,
      )
      await db.schema
        .createIndex('mail_outbox_created_at')
        .on('mail_outbox')
        .columns(['created_at', 'id'])
        .execute()
    },
  }
}
