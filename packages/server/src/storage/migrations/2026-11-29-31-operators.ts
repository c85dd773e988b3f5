import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Operator accounts (operators/): people who sign in to the dashboard. `email_lookup` is the
 * lower-cased address (unique); `password_hash` is an Argon2id PHC string, null until the operator
 * chooses a password. `operator_tokens` holds one-time links (setup, invitation, password reset) as
 * SHA-256 digests of their secret.
 */
export function operators(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('operators')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('email', 'text', (col) => col.notNull())
        .addColumn('email_lookup', 'text', (col) => col.notNull().unique())
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('role', 'text', (col) => col.notNull())
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('password_hash', 'text')
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('updated_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createTable('operator_tokens')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('token_digest', 'text', (col) => col.notNull().unique())
        .addColumn('purpose', 'text', (col) => col.notNull())
        .addColumn('operator_id', 'text')
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('expires_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createIndex('operator_tokens_operator')
        .on('operator_tokens')
        .column('operator_id')
        .execute()
    },
  }
}
