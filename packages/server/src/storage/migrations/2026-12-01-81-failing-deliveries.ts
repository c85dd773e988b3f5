import { type Kysely, sql } from 'kysely'

/**
 * The latest failing webhook deliveries (`GET /stats/failures`), newest attempt first: a partial
 * index holding only deliveries whose last attempt failed, so the overview never reads the
 * delivered ones. Its predicate is the query's (stats/kysely-failures-store.ts).
 */
export function failingDeliveries() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('webhook_deliveries_failing')
        .on('webhook_deliveries')
        .columns(['last_attempt_at', 'id'])
        .where(sql.ref('status'), '<>', 'delivered')
        .where(sql.ref('last_attempt_at'), 'is not', null)
        .execute()
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('webhook_deliveries_failing').execute()
    },
  }
}
