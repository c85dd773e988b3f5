import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Operators' second factors and single sign-on (operators/totp.ts, operators/oidc.ts).
 * `operator_totp` holds one TOTP seed per operator, encrypted with a key derived from the server's
 * secret, unconfirmed until the operator proves it with a first code; `last_used_step` refuses the
 * replay of a code. `operator_recovery_codes` keeps HMAC digests of the one-use recovery codes.
 * `operator_pending_sign_ins` holds the digest of a sign-in's pending token between the password
 * and the second factor (it is not a session). `operator_settings` holds server-wide operator
 * settings (whether two factors are required). `operator_identities` links an identity of an
 * OpenID Connect provider, by issuer and subject, to an operator.
 */
export function operatorFactors(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('operator_totp')
        .addColumn('operator_id', 'text', (col) => col.primaryKey())
        .addColumn('secret_encrypted', 'text', (col) => col.notNull())
        .addColumn('confirmed_at', types.timestamp)
        .addColumn('last_used_step', 'bigint')
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createTable('operator_recovery_codes')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('operator_id', 'text', (col) => col.notNull())
        .addColumn('code_digest', 'text', (col) => col.notNull().unique())
        .addColumn('used_at', types.timestamp)
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createIndex('operator_recovery_codes_operator')
        .on('operator_recovery_codes')
        .column('operator_id')
        .execute()
      await db.schema
        .createTable('operator_pending_sign_ins')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('token_digest', 'text', (col) => col.notNull().unique())
        .addColumn('operator_id', 'text', (col) => col.notNull())
        .addColumn('stage', 'text', (col) => col.notNull())
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('expires_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createTable('operator_settings')
        .addColumn('name', 'text', (col) => col.primaryKey())
        .addColumn('value', 'text', (col) => col.notNull())
        .addColumn('updated_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createTable('operator_identities')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('operator_id', 'text', (col) => col.notNull())
        .addColumn('issuer', 'text', (col) => col.notNull())
        .addColumn('subject', 'text', (col) => col.notNull())
        .addColumn('email', 'text')
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addUniqueConstraint('operator_identities_issuer_subject', ['issuer', 'subject'])
        .execute()
    },
  }
}
