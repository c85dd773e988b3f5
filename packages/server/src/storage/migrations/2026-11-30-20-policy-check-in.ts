import type { Kysely } from 'kysely'
import type { DatabaseKind } from '../database.js'

/**
 * The check-in policy, read live when a license validates or a token or file is issued: how long
 * an application may go without a successful online validation (seconds; null: no check-in) and
 * the grace period after that deadline (seconds; null: the application decides). Up to ten years
 * of seconds pass PostgreSQL's integer, hence bigint there.
 */
export function policyCheckIn(kind: DatabaseKind) {
  const seconds = kind === 'postgres' ? 'bigint' : 'integer'
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('policies').addColumn('check_in_interval', seconds).execute()
      await db.schema.alterTable('policies').addColumn('grace_period', seconds).execute()
    },
  }
}
