import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'

/**
 * Policy fields read live when files and tokens are issued: a license file's default lifetime
 * (a year for existing policies; null: no expiry), a longer token cap (null: the standard year)
 * and whether files carry the license's metadata (0/1). Lifetimes of up to a hundred years pass
 * PostgreSQL's integer, hence bigint there.
 */
export function policyFileFields(kind: DatabaseKind) {
  const seconds = kind === 'postgres' ? 'bigint' : 'integer'
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('policies')
        .addColumn('license_file_ttl', seconds, (col) => col.defaultTo(31_536_000))
        .execute()
      await db.schema.alterTable('policies').addColumn('token_ttl_max', seconds).execute()
      await db.schema
        .alterTable('policies')
        .addColumn('license_file_metadata', 'integer', (col) => col.notNull().defaultTo(0))
        .execute()
    },
  }
}
