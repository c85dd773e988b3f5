import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'

/** Policies template floating seats and metered usage too (the license columns of migration 60). */
export function policySeatsAndUsage(kind: DatabaseKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('policies').addColumn('heartbeat_ttl', 'integer').execute()
      await db.schema
        .alterTable('policies')
        .addColumn('max_uses', kind === 'postgres' ? 'bigint' : 'integer')
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('policies').dropColumn('max_uses').execute()
      await db.schema.alterTable('policies').dropColumn('heartbeat_ttl').execute()
    },
  }
}
